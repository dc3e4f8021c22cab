import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { releaseEverythingBelow } from '@dhv/sdk/host';
import { execa } from 'execa';
import fs from 'fs-extra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DHV_BIN, REPO_ROOT, loopDevices, skipUnless, tool, removeTempDir } from './support/kit.js';
import { inPrivateMountNamespace } from './support/private-mount-namespace.js';

/**
 * Docs as tests: every fenced `sh` block of README.md, docs/*.md and the package READMEs
 * is run as written, with bash -euo pipefail, the blocks of one section (heading) in one
 * shell, the sections of a page in order, each starting in the folder the one before it
 * ended in (or in the checkout's root, when `<!-- run in: the checkout -->` is just above
 * a block). A ```ts block with `<!-- save as: NAME -->` above it is written to NAME there,
 * for the blocks after it. A block that cannot run here says why just above itself,
 * `<!-- not run: why -->`, and is counted; every other block must report that it ran.
 *
 * Each page gets its own copy of the checkout (built: npm test builds first, so `npm ci`
 * and `npm run build` in the copy's root are done already and do nothing; everything else
 * is the real npm) and runs, concurrently with the other pages, as root in a private mount
 * namespace where /opt, /srv and /tmp are empty folders of its own, /opt/nomad/data/host_volume_plugins
 * made, as on a Nomad client. `npm install -g` installs into the page's own prefix, first on PATH.
 * Stand-ins for what a Nomad client has: `sudo` (this is root already), `nomad volume create
 * SPEC` (dhv volume create SPEC with the client's plugin dir: dhv is the client agent's
 * simulation) and `systemctl reload nomad` (the simulated agent finds plugins on every
 * command: there is nothing to reload). What a block assumes of the reader's own machine
 * (a plugin at ./my-plugin) is in PREPARED below, run just before the block.
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
  section: string;
  text: string;
  notRun?: string;
  /** A ```ts block to write to this file name, not run. */
  saveAs?: string;
  /** Starts in the checkout's root rather than where the block before it ended. */
  inCheckout: boolean;
}

const NOT_RUN = /^<!-- not run: (.+) -->$/;
const SAVE_AS = /^<!-- save as: (\S+) -->$/;
const IN_CHECKOUT = '<!-- run in: the checkout -->';

/** What a block takes for granted of the reader's machine, set up in its shell just before it (keyed `page: first line`). */
const PREPARED: Record<string, string> = {
  'packages/harness/README.md: npx dhv plugin run packages/plugin-mkdir/dist/dhv-mkdir fingerprint': [
    '# "dhv-loopback in /opt/plugins" and "a plugin at ./my-plugin": the reference plugins',
    'mkdir -p /opt/plugins && cp packages/plugin-loopback/dist/dhv-loopback /opt/plugins/',
    // A launcher, not a copy of the bundle: beside the checkout's "type": "module" package.json node would load a bundle as ESM.
    'printf \'#!/bin/sh\\nexec %s/packages/plugin-mkdir/dist/dhv-mkdir "$@"\\n\' "$PWD" > my-plugin && chmod +x my-plugin',
  ].join('\n'),
  'packages/harness/README.md: npx dhv init my-plugin --template mkdir   # packs this @dhv/sdk and @dhv/harness into my-plugin/vendor/':
    '# The examples above used ./my-plugin for a plugin file; this one makes a project of that name.\nrm -f my-plugin',
};

function blocksOf(page: string): Block[] {
  const lines = readFileSync(join(REPO_ROOT, page), 'utf8').split('\n');
  const blocks: Block[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    if (/^#{1,6} /.test(lines[i]!)) section = lines[i]!;
    const fence = /^```(\w*)$/.exec(lines[i]!);
    if (!fence) continue;
    const end = lines.indexOf('```', i + 1);
    let before = i - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    const marker = before >= 0 ? lines[before]! : '';
    const text = lines.slice(i + 1, end).join('\n');
    const notRun = NOT_RUN.exec(marker)?.[1];
    const saveAs = SAVE_AS.exec(marker)?.[1];
    if (fence[1] === 'sh' || saveAs)
      blocks.push({
        page,
        line: i + 1,
        section,
        text,
        ...(notRun ? { notRun } : {}),
        ...(saveAs ? { saveAs } : {}),
        inCheckout: marker === IN_CHECKOUT,
      });
    i = end;
  }
  return blocks;
}

const ALL = PAGES.flatMap(blocksOf);
const keyOf = (b: Block) => `${b.page}: ${b.text.split('\n')[0]}`;

const userEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^(npm_|VITEST|NODE_OPTIONS$|NODE_ENV$|FORCE_COLOR$|DHV_)/i.test(key)),
);

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
  // How the npm stand-in knows a copy's root.
  await fs.writeFile(join(to, '.docs-examples-checkout'), '');
}

const script = (lines: readonly string[]) => ({ text: [...lines, ''].join('\n'), mode: 0o755 });

/** The stand-ins on PATH (see the top of this file). */
async function writeStandIns(bin: string): Promise<void> {
  const realNpm = (await execa('sh', ['-c', 'command -v npm'])).stdout.trim();
  const files = {
    npm: script([
      '#!/bin/sh',
      '# In a copy of the checkout, `npm ci` and `npm run build` were done before the tests ran.',
      'if [ -e "$PWD/.docs-examples-checkout" ]; then case "$*" in ci|"run build") exit 0 ;; esac; fi',
      `exec ${realNpm} "$@"`,
    ]),
    sudo: script(['#!/bin/sh', '# Root already.', 'exec "$@"']),
    nomad: script([
      '#!/bin/sh',
      '# A Nomad client stand-in: dhv simulates its agent, with the client plugin dir.',
      'if [ "$1 $2" = "volume create" ] && [ $# -eq 3 ]; then',
      `  exec ${process.execPath} ${DHV_BIN} volume create "$3" --plugin-dir /opt/nomad/data/host_volume_plugins`,
      'fi',
      'echo "nomad stand-in of the docs examples: only nomad volume create SPEC is simulated, not: nomad $*" >&2',
      'exit 2',
    ]),
    systemctl: script([
      '#!/bin/sh',
      '# The simulated agent finds plugins on every command: there is nothing to reload.',
      '[ "$*" = "reload nomad" ] && exit 0',
      'echo "systemctl stand-in of the docs examples: only systemctl reload nomad, not: systemctl $*" >&2',
      'exit 2',
    ]),
  };
  for (const [name, file] of Object.entries(files))
    await fs.outputFile(join(bin, name), file.text, { mode: file.mode });
}

const BEGIN = '@@docs-example-begin';
const END = '@@docs-example-end';

/** One section's blocks as one bash script: each announces itself before and after it runs. */
function sectionScript(blocks: readonly Block[], clone: string, cwdFile: string): string {
  const lines = [`cd "$(cat '${cwdFile}')"`];
  for (const block of blocks) {
    const id = `${block.page}:${block.line}`;
    lines.push(`echo '${BEGIN} ${id}'`);
    if (block.inCheckout) lines.push(`cd '${clone}'`);
    if (block.saveAs) {
      const eof = `DOCS_EXAMPLE_EOF_${block.line}`;
      lines.push(`cat > '${block.saveAs}' <<'${eof}'`, block.text, eof);
    } else {
      const prepared = PREPARED[keyOf(block)];
      if (prepared) lines.push(prepared);
      lines.push(block.text);
    }
    lines.push(`echo '${END} ${id}'`);
  }
  lines.push(`pwd > '${cwdFile}'`);
  return lines.join('\n');
}

/** Runs `text` with bash -euo pipefail as root in a mount namespace where /opt, /srv and /tmp are the page's own. */
function inPageNamespace(text: string, root: string, env: Record<string, string>) {
  const [command, args] = inPrivateMountNamespace(
    [
      'for d in opt srv tmp; do /usr/bin/mount --bind "$1/$d" "/$d" || exit 1; done',
      // stdin not a socket: bash reads /etc/bash.bashrc when it thinks sshd started it.
      'exec /bin/bash -euo pipefail -c "$2"',
    ].join('\n'),
    ['sh', root, text],
  );
  return execa(command, args, { env, extendEnv: false, reject: false, stdin: 'ignore', all: true });
}

const runnable = ALL.filter((b) => b.notRun === undefined);
const skipAll = skipUnless(
  'the docs examples (a private mount namespace)',
  loopDevices(),
  tool('unshare', 'util-linux'),
);

let sandbox: string;
let bin: string;

beforeAll(async () => {
  // Not under /tmp: each page's own /tmp is bound over it.
  sandbox = await mkdtemp('/var/tmp/dhv-docs-examples-');
  bin = join(sandbox, 'bin');
  await writeStandIns(bin);
}, 60_000);

afterAll(async () => {
  if (!sandbox) return;
  await releaseEverythingBelow(sandbox).catch(() => {});
  await removeTempDir(sandbox);
}, 120_000);

describe('the shell examples of the docs', () => {
  it('are each run, or say why not just above them', () => {
    const notRun = ALL.filter((b) => b.notRun !== undefined);
    const marked = PAGES.flatMap((page) =>
      readFileSync(join(REPO_ROOT, page), 'utf8')
        .split('\n')
        .flatMap((line, i) => (NOT_RUN.test(line) || SAVE_AS.test(line) ? [`${page}:${i + 1}`] : [])),
    );
    const stale = marked.filter(
      (where) => !ALL.some((b) => where.startsWith(`${b.page}:`) && Number(where.split(':')[1]) < b.line),
    );
    expect(stale, 'a not-run or save-as marker with no block after it').toEqual([]);
    console.log(
      `docs examples: ${runnable.filter((b) => !b.saveAs).length} run, ${notRun.length} not run:\n` +
        notRun.map((b) => `  ${b.page}:${b.line}: ${b.notRun}`).join('\n'),
    );
    expect(Object.keys(PREPARED).filter((key) => !runnable.some((b) => keyOf(b) === key))).toEqual([]);
  });

  describe.skipIf(skipAll)('run as written', () => {
    for (const page of PAGES) {
      const blocks = runnable.filter((b) => b.page === page);
      if (!blocks.some((b) => !b.saveAs)) continue;
      const sections = [...new Set(blocks.map((b) => b.section))];
      it.concurrent(
        `${page}: ${blocks.length} block(s) in ${sections.length} section(s), in order`,
        async ({ expect }) => {
          const pageDir = join(sandbox, page.replace(/\W+/g, '-'));
          const clone = join(pageDir, 'dhv');
          const root = join(pageDir, 'root');
          try {
            await copyCheckout(clone);
            for (const dir of ['opt/nomad/data/host_volume_plugins', 'srv', 'tmp']) await fs.ensureDir(join(root, dir));
            const cwdFile = join(pageDir, 'cwd');
            await fs.writeFile(cwdFile, clone);
            const env = {
              ...userEnv,
              NO_COLOR: '1',
              PATH: `${join(pageDir, 'prefix/bin')}:${bin}:${userEnv.PATH ?? ''}`,
              npm_config_prefix: join(pageDir, 'prefix'),
              npm_config_prefer_offline: 'true',
              npm_config_audit: 'false',
              npm_config_fund: 'false',
              npm_config_update_notifier: 'false',
            };
            for (const section of sections) {
              const these = blocks.filter((b) => b.section === section);
              const started = performance.now();
              const run = await inPageNamespace(sectionScript(these, clone, cwdFile), root, env);
              console.log(
                `${page} ${section}: exit ${run.exitCode} in ${Math.round((performance.now() - started) / 1000)} s`,
              );
              const output = run.all ?? '';
              const begun = [...output.matchAll(new RegExp(`^${BEGIN} (\\S+)$`, 'gm'))].map((m) => m[1]);
              const failed = these.find((b) => begun.at(-1) === `${b.page}:${b.line}`) ?? these[0]!;
              expect(run.exitCode, `${page}:${failed.line} (${section})\n${failed.text}\n--- output\n${output}`).toBe(
                0,
              );
              const ended = [...output.matchAll(new RegExp(`^${END} (\\S+)$`, 'gm'))].map((m) => m[1]);
              expect(ended, `every block of ${section} ran to its end`).toEqual(
                these.map((b) => `${b.page}:${b.line}`),
              );
            }
          } finally {
            await releaseEverythingBelow(pageDir).catch(() => {});
            await fs.remove(pageDir).catch(() => {});
          }
        },
        // A page's check runs take minutes on a machine with a load of 30; a few on an idle one.
        1_800_000,
      );
    }
  });
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

  it('says in the SDK README what its examples need: esbuild for dhv-bundle, NodeNext for the client', () => {
    const readme = readFileSync(join(REPO_ROOT, 'packages/sdk/README.md'), 'utf8');
    expect(readme).toContain('`npm install --save-dev esbuild`');
    expect(readme).toContain('`"moduleResolution": "NodeNext"`');
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
