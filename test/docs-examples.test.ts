import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import fs from 'fs-extra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir, removeTempDir } from './support/kit.js';

/**
 * Docs as tests: every fenced `sh` block of the READMEs and docs/*.md is run as written,
 * with bash -euo pipefail, in a copy of the checkout, the blocks of one page in order and
 * each starting in the folder the one before it ended in, as a reader types them (or in
 * the checkout's root, when `<!-- run in: the checkout -->` is just above it). A block
 * that cannot run here says so just above itself, `<!-- not run: why -->`, and is counted.
 *
 * The copy is made after `npm ci && npm run build` (npm test builds first), so in the
 * copy's root those two commands are done already and do nothing; everything else is the
 * real npm. `npm install -g` installs into the sandbox's own prefix, first on PATH.
 */

const PAGES = [
  'README.md',
  ...readdirSync(join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...readdirSync(join(REPO_ROOT, 'packages')).map((p) => `packages/${p}/README.md`),
];

interface Block {
  page: string;
  line: number;
  text: string;
  notRun?: string;
  /** Starts in the checkout's root rather than where the block before it ended. */
  inCheckout: boolean;
}

const NOT_RUN = /^<!-- not run: (.+) -->$/;
const IN_CHECKOUT = '<!-- run in: the checkout -->';

function blocksOf(page: string): Block[] {
  const lines = readFileSync(join(REPO_ROOT, page), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```sh') continue;
    const end = lines.indexOf('```', i + 1);
    let before = i - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    const marker = before >= 0 ? NOT_RUN.exec(lines[before]!) : null;
    blocks.push({
      page,
      line: i + 1,
      text: lines.slice(i + 1, end).join('\n'),
      ...(marker ? { notRun: marker[1]! } : {}),
      inCheckout: before >= 0 && lines[before] === IN_CHECKOUT,
    });
    i = end;
  }
  return blocks;
}

const ALL = PAGES.flatMap(blocksOf);

const userEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^(npm_|VITEST|NODE_OPTIONS$|NODE_ENV$|FORCE_COLOR$|DHV_)/i.test(key)),
);

let sandbox: string;
let clone: string;

/** The checkout's files and built outputs, copied (npm pack skips a linked folder); its installed node_modules, linked. */
async function copyCheckout(to: string): Promise<void> {
  const listed = await execa('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: REPO_ROOT,
  });
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    if (await fs.pathExists(join(REPO_ROOT, file))) await fs.copy(join(REPO_ROOT, file), join(to, file));
  }
  const packages = readdirSync(join(REPO_ROOT, 'packages')).map((name) => `packages/${name}`);
  for (const path of packages.flatMap((p) => [`${p}/dist`, `${p}/lib`])) {
    if (await fs.pathExists(join(REPO_ROOT, path))) await fs.copy(join(REPO_ROOT, path), join(to, path));
  }
  for (const path of ['node_modules', ...packages.map((p) => `${p}/node_modules`)]) {
    if (await fs.pathExists(join(REPO_ROOT, path))) await fs.ensureSymlink(join(REPO_ROOT, path), join(to, path));
  }
}

beforeAll(async () => {
  sandbox = await tempDir('docs-examples');
  clone = join(sandbox, 'dhv');
  await copyCheckout(clone);
  const realNpm = (await execa('sh', ['-c', 'command -v npm'])).stdout.trim();
  await fs.outputFile(
    join(sandbox, 'bin/npm'),
    [
      '#!/bin/sh',
      '# In the copy of the checkout, `npm ci` and `npm run build` were done before the tests ran.',
      `if [ "$PWD" = "${clone}" ]; then case "$*" in ci|"run build") exit 0 ;; esac; fi`,
      `exec ${realNpm} "$@"`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
}, 120_000);

afterAll(async () => {
  await removeTempDir(sandbox);
}, 60_000);

describe('the shell examples of the docs', () => {
  it('are each run, or say why not just above them', () => {
    const notRun = ALL.filter((b) => b.notRun !== undefined);
    const stale = PAGES.flatMap((page) =>
      readFileSync(join(REPO_ROOT, page), 'utf8')
        .split('\n')
        .flatMap((line, i) => (NOT_RUN.test(line) ? [`${page}:${i + 1}`] : [])),
    ).filter((where) => !notRun.some((b) => where.startsWith(`${b.page}:`) && Number(where.split(':')[1]) < b.line));
    expect(stale, 'a not-run marker with no sh block after it').toEqual([]);
    console.log(
      `docs examples: ${ALL.length - notRun.length} run, ${notRun.length} not run:\n` +
        notRun.map((b) => `  ${b.page}:${b.line}: ${b.notRun}`).join('\n'),
    );
    expect(ALL.length - notRun.length).toBeGreaterThan(0);
  });

  for (const page of PAGES) {
    const runnable = ALL.filter((b) => b.page === page && b.notRun === undefined);
    if (runnable.length === 0) continue;
    it(`${page}: ${runnable.length} block(s), in order`, async () => {
      const cwdFile = join(sandbox, `${page.replace(/\W+/g, '-')}.cwd`);
      await fs.writeFile(cwdFile, clone);
      const env = {
        ...userEnv,
        NO_COLOR: '1',
        PATH: `${join(sandbox, 'prefix/bin')}:${join(sandbox, 'bin')}:${userEnv.PATH ?? ''}`,
        npm_config_prefix: join(sandbox, 'prefix'),
        npm_config_prefer_offline: 'true',
        npm_config_audit: 'false',
        npm_config_fund: 'false',
        npm_config_update_notifier: 'false',
      };
      for (const block of runnable) {
        if (block.inCheckout) await fs.writeFile(cwdFile, clone);
        const script = `cd "$(cat '${cwdFile}')"\n${block.text}\npwd > '${cwdFile}'\n`;
        // stdin not a socket: bash reads /etc/bash.bashrc when it thinks sshd started it.
        const run = await execa('/bin/bash', ['-euo', 'pipefail', '-c', script], {
          env,
          extendEnv: false,
          reject: false,
          stdin: 'ignore',
          all: true,
        });
        expect(run.exitCode, `${page}:${block.line}\n${block.text}\n--- output\n${run.all}`).toBe(0);
      }
    }, 900_000);
  }
});

describe('what the docs say about packages', () => {
  it('points at no @dhv/* package on the npm registry: none is published', () => {
    const pointing = PAGES.flatMap((page) =>
      readFileSync(join(REPO_ROOT, page), 'utf8')
        .split('\n')
        .flatMap((line, i) => (/npm (install|i|add)( -\S+)* @dhv\/|npx @dhv\//.test(line) ? [`${page}:${i + 1}`] : [])),
    );
    expect(pointing).toEqual([]);
  });

  it("lists every entry point of @dhv/sdk in the SDK README's table", async () => {
    const manifest = (await fs.readJson(join(REPO_ROOT, 'packages/sdk/package.json'))) as {
      exports: Record<string, unknown>;
    };
    const readme = readFileSync(join(REPO_ROOT, 'packages/sdk/README.md'), 'utf8');
    const entries = Object.keys(manifest.exports)
      .filter((e) => e !== './package.json')
      .map((e) => (e === '.' ? '@dhv/sdk' : `@dhv/sdk/${e.slice(2)}`));
    expect(entries.filter((e) => !readme.includes(`| \`${e}\` |`))).toEqual([]);
  });

  it('says a bundle starts with the /bin/sh launcher, not with #! and a node path', () => {
    const wrong = PAGES.flatMap((page) =>
      readFileSync(join(REPO_ROOT, page), 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          /#!\/absolute\/path|starts with `#!` and the absolute path|`#!<absolute path of the node/.test(line)
            ? [`${page}:${i + 1}`]
            : [],
        ),
    );
    expect(wrong).toEqual([]);
  });
});
