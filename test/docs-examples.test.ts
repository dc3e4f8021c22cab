import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { releaseEverythingBelow } from '@dhv/sdk/host';
import fs from 'fs-extra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ALL_BLOCKS,
  DOC_PAGES as PAGES,
  NOT_RUN,
  PREPARED,
  RUN_ELSEWHERE,
  SAVE_AS,
  copyCheckout,
  elsewhere,
  expectSectionsRan,
  idOf,
  keyOf,
  runSections,
  type Block,
} from './support/docs-blocks.js';
import { writeStandIns } from './support/docs-stand-ins.js';
import { REPO_ROOT, loopDevices, skipUnless, tool, removeTempDir, tempDir } from './support/kit.js';

/**
 * Docs as tests (test/support/docs-blocks.ts says how a block runs): every page's `sh` blocks
 * run as written in a copy of the checkout (built: npm test builds first, so `npm ci` and
 * `npm run build` in the copy's root are done already and do nothing; everything else is
 * the real npm), the pages side by side, and a section marked `run in: a checkout of its
 * own` in a copy of its own beside the rest of its page. What runs elsewhere (the one-file
 * install, the SDK page's project, the reference plugins' checks) is RUN_ELSEWHERE, and counted here.
 */

const ALL = ALL_BLOCKS;
const runnable = ALL.filter((b) => b.notRun === undefined);
const here = runnable.filter((b) => !elsewhere(b));

/** The blocks of each page that run here, cut where a section starts in a checkout of its own: each part runs in its own copy. */
function parts(page: string): Block[][] {
  const out: Block[][] = [];
  for (const block of here.filter((b) => b.page === page)) {
    if (out.length === 0 || block.startIn === 'own-checkout') out.push([]);
    out.at(-1)!.push(block);
  }
  return out.filter((blocks) => blocks.some((b) => !b.saveAs));
}

const skipAll = skipUnless(
  'the docs examples (a private mount namespace)',
  loopDevices(),
  tool('unshare', 'util-linux'),
);

let sandbox: string;
let bin: string;

beforeAll(async () => {
  // Not under /tmp, where each run's own /tmp is bound. On the root disk, not the suite's tmpfs: the kernel
  // names a loop device's image, attached in a block's namespace that is gone, by its path from the root of
  // its filesystem, which is the path here only on / (on the tmpfs it lacks /dev/shm, and the clean-up
  // would not know the device for one of its own).
  sandbox = await tempDir('docs-examples', '/var/tmp');
  bin = join(sandbox, 'bin');
  await writeStandIns(bin);
  await fs.ensureDir(join(sandbox, 'memo'));
}, 60_000);

afterAll(async () => {
  if (!sandbox) return;
  await releaseEverythingBelow(sandbox).catch(() => {});
  await removeTempDir(sandbox);
}, 120_000);

describe('the shell examples of the docs', () => {
  it('are each run, here or by the test of their setting, or say why not just above them', () => {
    const notRun = ALL.filter((b) => b.notRun !== undefined);
    const marked = PAGES.flatMap((page) =>
      readFileSync(join(REPO_ROOT, page), 'utf8')
        .split('\n')
        .flatMap((line, i) => (NOT_RUN.test(line.trim()) || SAVE_AS.test(line.trim()) ? [`${page}:${i + 1}`] : [])),
    );
    const stale = marked.filter(
      (where) => !ALL.some((b) => where.startsWith(`${b.page}:`) && Number(where.split(':')[1]) < b.line),
    );
    expect(stale, 'a not-run or save-as marker with no block after it').toEqual([]);
    expect(
      RUN_ELSEWHERE.filter((e) => !runnable.some((b) => elsewhere(b) === e)),
      'a page or section run elsewhere that has no block',
    ).toEqual([]);
    const away = runnable.filter((b) => elsewhere(b) && !b.saveAs);
    console.log(
      `docs examples: ${here.filter((b) => !b.saveAs).length} run here, ${away.length} elsewhere, ${notRun.length} not run:\n` +
        away.map((b) => `  ${idOf(b)}: by ${elsewhere(b)!.by} (${elsewhere(b)!.where})`).join('\n') +
        '\n' +
        notRun.map((b) => `  ${idOf(b)}: ${b.notRun}`).join('\n'),
    );
    expect(Object.keys(PREPARED).filter((key) => !runnable.some((b) => keyOf(b) === key))).toEqual([]);
  });

  describe.skipIf(skipAll)('run as written', () => {
    for (const page of PAGES) {
      for (const [n, blocks] of parts(page).entries()) {
        const sections = [...new Set(blocks.map((b) => b.section))];
        it.concurrent(
          `${page}${n > 0 ? ` (from ${sections[0]}, in a checkout of its own)` : ''}: ${blocks.length} block(s) in ${sections.length} section(s), in order`,
          async ({ expect }) => {
            const dir = join(sandbox, `${page.replace(/\W+/g, '-')}-${n}`);
            const checkout = join(dir, 'dhv');
            try {
              await copyCheckout(checkout);
              expectSectionsRan(
                await runSections(blocks, { dir, checkout, bin, memo: join(sandbox, 'memo') }),
                blocks,
                expect,
              );
            } finally {
              await releaseEverythingBelow(dir).catch(() => {});
              await fs.remove(dir).catch(() => {});
            }
          },
          // A page's check runs take minutes on a machine with a load of 30; a few on an idle one.
          1_800_000,
        );
      }
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
