import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import fs from 'fs-extra';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { dhvCheck, SUITE_TIMEOUT_MS } from './support/check-cli.js';
import { REPO_ROOT, loopDevices, removeTempDir, runDhv, skipUnless, tempDir, tool } from './support/kit.js';
import type { ConformanceReport } from '../packages/harness/src/conformance/index.js';

/**
 * docs/authoring.md's loop-backed plugin, as the page shows it: its plugin and its undo tests
 * are the section's two ```ts blocks, written into a project of their own; the tests run as
 * the page says (in process, the fault seam), and as root the plugin is built and checked with
 * the declarations of the section's ```sh block.
 */
const PAGE = join(REPO_ROOT, 'docs/authoring.md');
const SECTION = '### A real plugin: loop-backed volumes, ext4 or xfs';

async function sectionBlocks(): Promise<{ ts: string[]; sh: string[] }> {
  const page = await readFile(PAGE, 'utf8');
  const start = page.indexOf(`\n${SECTION}\n`);
  expect(start, `${SECTION} in docs/authoring.md`).toBeGreaterThan(0);
  const end = page.indexOf('\n#', start + SECTION.length + 2);
  const section = page.slice(start, end);
  const blocks = (lang: string) =>
    [...section.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((m) => m[1]!);
  return { ts: blocks('ts'), sh: blocks('sh') };
}

describe("docs/authoring.md's loop-backed plugin", () => {
  // Inside the checkout, so that the plugin resolves @dhv/sdk as a project depending on it would.
  let project: string;
  let blocks: { ts: string[]; sh: string[] };

  beforeAll(async () => {
    blocks = await sectionBlocks();
    project = await tempDir('docs-loop-plugin', REPO_ROOT);
    await fs.outputFile(join(project, 'src/plugin.ts'), blocks.ts[0]!);
    await fs.outputFile(join(project, 'test/undo.test.ts'), blocks.ts[1]!);
  });
  afterAll(async () => {
    if (project) await removeTempDir(project);
  });

  test('shows a plugin and its undo tests', () => {
    expect(blocks.ts).toHaveLength(2);
    expect(blocks.ts[0]).toMatch(/parameterSchema\(/);
    expect(blocks.ts[1]).toMatch(/failAt: \{ step \}/);
  });

  test('its undo tests pass, run by vitest in the project as the page says', async () => {
    // The vitest `npx vitest` finds from the project (the checkout's), without npm's start.
    const vitest = join(REPO_ROOT, 'node_modules/.bin/vitest');
    const run = await execa(process.execPath, [vitest, 'run', '--root', project, '--reporter', 'verbose'], {
      cwd: project,
      reject: false,
      env: { CI: '1' },
    });
    expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/4 passed/);
  }, 120_000);

  const skip = skipUnless("the docs' loop-backed plugin under dhv check", loopDevices(), tool('mkfs.xfs', 'xfsprogs'));
  test.skipIf(skip)(
    'builds, and passes dhv check with the declarations the page gives, its own sizes judged and every injected failure undone',
    async () => {
      const [build, check] = blocks.sh[0]!.split('\n').map((line) => line.replace(/^(sudo )?npx dhv /, '').split(' '));
      expect(build![0]).toBe('build');
      const built = await runDhv(build!, { cwd: project });
      expect(built.exitCode, built.stderr).toBe(0);
      expect(check![0]).toBe('check');
      // The explorer and the tasks checks take minutes of their own: the catalogue judges the declarations.
      const { report, leftoverMounts, leftoverLoopDevices } = await dhvCheck(join(project, check![1]!), [
        ...check!.slice(2),
        '--no-explore',
        '--skip',
        'tasks',
      ]);
      const status = (id: string) => report.results.find((r) => r.id === id)?.status;
      expect(notPassed(report)).toEqual([]);
      for (const id of ['create.bytes-within-capacity', 'create.expands', 'errors.injected-failures-leave-nothing'])
        expect(status(id), id).toBe('pass');
      expect([...leftoverMounts, ...leftoverLoopDevices]).toEqual([]);
    },
    SUITE_TIMEOUT_MS,
  );
});

const notPassed = (report: ConformanceReport) =>
  report.results.filter((r) => r.status !== 'pass').map((r) => `${r.id}: ${r.status}: ${r.reason ?? ''}`);
