import { existsSync } from 'node:fs';
import { rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { runSeedStory } from '@dhv/harness';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { DHV_BIN, REPO_ROOT, rootTestsUnavailable, skipUnless } from './support/kit.js';
import { NOBODY, asNobodyInCheckoutView, checkoutViewForOtherUser, makeView } from './support/other-user.js';

function demo(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(process.execPath, [DHV_BIN, 'demo', ...args]);
}

async function run(file: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const result = await execa(file, args, { reject: false });
  return { code: result.exitCode ?? 1, stdout: result.stdout, stderr: result.stderr };
}

/** The demo runs every plugin operation as its own process: minutes, not seconds, on a loaded machine. */
const DEMO_TIMEOUT_MS = 300_000;

describe('dhv demo', () => {
  it(
    'runs the story of SEED.md in-process through the library and leaves nothing behind',
    async () => {
      const report = await runSeedStory();
      expect(report, report.error).toMatchObject({ ok: true, leftBehind: [] });
      expect(report.loopback.ran).toBe(rootTestsUnavailable() === undefined);
      expect(existsSync(report.workDir)).toBe(false);
      expect(report.steps.every((s) => s.ok)).toBe(true);
      const commands = report.steps.map((s) => s.command.split(' --config')[0]);
      expect(commands).toEqual(
        expect.arrayContaining(['dhv agent fingerprint', 'dhv agent restart --reboot', 'dhv volume status']),
      );
      expect(Object.keys(report.hostVolumes).sort()).toEqual(
        report.loopback.ran ? ['cloud-img', 'scratch', 'test'] : ['cloud-img', 'scratch'],
      );
      expect(report.hostVolumes['cloud-img']!.ID).toBe('');
      expect(report.volumes.map((v) => [v.name, v.stateAfterRestart, v.fileSurvived])).toEqual(
        report.loopback.ran
          ? [
              ['scratch', 'ready', true],
              ['test', 'ready', true],
            ]
          : [['scratch', 'ready', true]],
      );
      if (report.loopback.ran) expect(report.volumes[1]!.capacityBytes).toBeGreaterThanOrEqual(47n * 1024n * 1024n);
    },
    DEMO_TIMEOUT_MS,
  );

  it(
    'prints the same report as JSON with --json',
    async () => {
      const run = await demo('--json', '--no-loopback');
      expect(run.code, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout);
      expect(report).toMatchObject({ ok: true, leftBehind: [], loopback: { ran: false } });
      expect(typeof report.volumes[0].capacityBytes).toBe('number');
    },
    DEMO_TIMEOUT_MS,
  );

  it(
    'says why it skips the loopback volume when asked to leave it out',
    async () => {
      const run = await demo('--no-loopback');
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('skipping the dhv-loopback volume: turned off (--no-loopback)');
      expect(run.stdout).toContain('✓ every file survived the restart');
      expect(run.stdout).toMatch(/==> Nothing left behind/);
    },
    DEMO_TIMEOUT_MS,
  );

  it.skipIf(skipUnless('the demo as a non-root user', checkoutViewForOtherUser()))(
    'as a non-root user, runs the mkdir part and says why it skips the loopback volume',
    async () => {
      // The checkout may sit in a private folder: nobody runs it through a bind mount at a world-reachable path.
      const view = await makeView();
      // Where a user's dhv keeps its cleanup journal (CleanupJournal): nobody's, made by this run unless it was there.
      const journal = join(tmpdir(), `dhv-cleanup-journal-${NOBODY.uid}`);
      const journalWasThere = existsSync(journal);
      try {
        const asNobody = await run(
          ...asNobodyInCheckoutView(view, [process.execPath, join(view, relative(REPO_ROOT, DHV_BIN)), 'demo']),
        );
        expect(asNobody.code, asNobody.stderr).toBe(0);
        expect(asNobody.stdout).toMatch(
          /skipping the dhv-loopback volume: the loopback plugin attaches loop devices and mounts filesystems, which needs root/,
        );
        expect(asNobody.stdout).toContain('✓ every file survived the restart');
        expect(asNobody.stdout).toMatch(/==> Nothing left behind/);
      } finally {
        await rm(view, { recursive: true, force: true });
        if (!journalWasThere) await rmdir(journal).catch(() => {});
      }
    },
    DEMO_TIMEOUT_MS,
  );
});
