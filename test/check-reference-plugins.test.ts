import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { releaseEverythingBelow } from '@dhv/sdk/host';
import fs from 'fs-extra';
import { describe, expect, test } from 'vitest';
import { REPO_ROOT, loopDevices, skipRootTests, skipUnless, tool, removeTempDir, tempDir } from './support/kit.js';
import { SUITE_TIMEOUT_MS, failedRequired, leftoversIn, textReports } from './support/check-cli.js';
import {
  blocksRunBy,
  copyCheckout,
  expectSectionsRan,
  runSections,
  runTmp,
  type Block,
  type BlockRun,
} from './support/docs-blocks.js';
import { writeStandIns } from './support/docs-stand-ins.js';
import type { ConformanceReport } from '../packages/harness/src/conformance/index.js';

/**
 * The reference plugins pass every check, the explore checks included, as the docs run them: the
 * README's and the harness README's `dhv check` examples are run here as written (docs-blocks'
 * RUN_ELSEWHERE: the docs examples leave them to this test), with the docs' two explorer sequences
 * (DHV_CHECK_RUNS=2, a fresh random seed each run, printed in the report: a correct plugin never
 * ends the default budget early, and test/check-explore.test.ts proves the explorer finds what it
 * must). What is judged beyond their exit: every report they print or write names no failed
 * required check, and dhv check leaves nothing in the run's /tmp, where it makes its run root.
 */
const FILE = 'test/check-reference-plugins.test.ts';
const isLoopback = (b: Block) => b.text.startsWith('sudo npx dhv check packages/plugin-loopback/');

const skipNamespace = skipUnless(
  'the docs examples (a private mount namespace)',
  loopDevices(),
  tool('unshare', 'util-linux'),
);

async function inRunDir<T>(prefix: string, body: (dir: string) => Promise<T>): Promise<T> {
  const dir = await tempDir(prefix, '/var/tmp');
  try {
    return await body(dir);
  } finally {
    await releaseEverythingBelow(dir).catch(() => {});
    await removeTempDir(dir);
  }
}

// Side by side: independent plugins, each run in a folder of its own.
describe.concurrent('dhv check passes the reference plugins, as the docs run it', () => {
  test.skipIf(skipNamespace)(
    "dhv-mkdir passes every required check: the README's and the harness README's checks of it",
    async () => {
      const blocks = blocksRunBy(FILE).filter((b) => !isLoopback(b));
      expect(blocks.map((b) => b.page)).toEqual(['README.md', 'packages/harness/README.md']);
      await inRunDir('check-reference-mkdir', async (dir) => {
        // A copy of the checkout, where the docs' `npm run build` is done already; an identical check once.
        const run: BlockRun = { dir, checkout: join(dir, 'dhv'), bin: join(dir, 'bin'), memo: join(dir, 'memo') };
        await Promise.all([writeStandIns(run.bin), copyCheckout(run.checkout), fs.ensureDir(run.memo!)]);
        const results = await runSections(blocks, run);
        expectSectionsRan(results, blocks, expect);
        const output = results.map((r) => r.output).join('\n');
        // dhv-mkdir (twice: the memo shows the first one's report again), then ./my-plugin --only create.
        const reports = textReports(output);
        expect(reports, output).toHaveLength(3);
        for (const r of reports) expect(r.requiredFailed, `${r.summary}\n${r.verdict}`).toBe(0);
        // ./my-plugin is the bash fixture good-plugin (docs-blocks.ts, PREPARED): its whole report, as JSON.
        const report = JSON.parse(await readFile(join(run.checkout, 'report.json'), 'utf8')) as ConformanceReport;
        expect(report.results.some((r) => r.id.startsWith('explore.'))).toBe(true);
        expect(failedRequired(report)).toEqual([]);
        expect(await leftoversIn(runTmp(run), { tmpdir: true })).toMatchObject({ leftovers: [] });
      });
    },
    SUITE_TIMEOUT_MS,
  );

  test.skipIf(skipRootTests('dhv check of dhv-loopback'))(
    "dhv-loopback passes every required check and leaves no mount or loop device: the harness README's check as root",
    async () => {
      const blocks = blocksRunBy(FILE).filter(isLoopback);
      expect(blocks, 'the block RUN_ELSEWHERE names').toHaveLength(1);
      await inRunDir('check-reference-loopback', async (dir) => {
        // In the checkout, which the check writes nothing into; no namespace of its own, so the mounts and
        // loop devices it leaves (below the run's TMPDIR) can be seen from here.
        const run: BlockRun = { dir, checkout: REPO_ROOT, bin: join(dir, 'bin'), namespace: false };
        await writeStandIns(run.bin);
        const results = await runSections(blocks, run);
        expectSectionsRan(results, blocks, expect);
        const reports = textReports(results.map((r) => r.output).join('\n'));
        expect(reports, results[0]!.output).toHaveLength(1);
        expect(reports[0]!.requiredFailed, reports[0]!.verdict).toBe(0);
        expect(await leftoversIn(runTmp(run), { tmpdir: true })).toEqual({
          leftovers: [],
          leftoverMounts: [],
          leftoverLoopDevices: [],
        });
      });
    },
    SUITE_TIMEOUT_MS,
  );
});
