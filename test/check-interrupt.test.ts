import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { chmod, copyFile, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, test } from 'vitest';
import { finished } from './support/gates.js';
import { volumesDiskFoldersBelow } from '@dhv/sdk/host';
import {
  DHV_BIN,
  REFERENCE_LOOPBACK,
  REFERENCE_MKDIR,
  REPO_ROOT,
  loopDeviceNamesBackedBelow,
  loopDevices,
  mountPointsAtOrBelow,
  removeTempDir,
  runDhv,
  skipUnless,
  tempDir,
} from './support/kit.js';
import { killAll, recordedPids, survivors } from './support/processes.js';

const FIXTURE = join(REPO_ROOT, 'test/fixtures/check-space/blocks-until-killed.sh');

/** The plugin copied into a folder of the test's own, its gate made, a scratch dir and a cleanup journal of its own. */
async function setUp(onTestFinished: (fn: () => Promise<void>) => void) {
  const dir = await tempDir('interrupt');
  const plugin = join(dir, 'plugin');
  onTestFinished(async () => {
    killAll(await recordedPids(`${plugin}.pids`));
    await removeTempDir(dir);
  });
  await copyFile(FIXTURE, plugin);
  await chmod(plugin, 0o755);
  execFileSync('/usr/bin/mkfifo', [`${plugin}.gate`]);
  const scratch = join(dir, 'scratch');
  const journal = join(dir, 'journal');
  await mkdir(scratch);
  return { plugin, scratch, journal, env: { ...process.env, NO_COLOR: '1', DHV_CLEANUP_JOURNAL: journal } };
}

/** Waits until the plugin has started `operation` (it then waits at its gate for ever). */
async function started(plugin: string, operation: 'create' | 'delete'): Promise<void> {
  const log = `${plugin}.log`;
  for (let i = 0; i < 4800; i++) {
    if (existsSync(log) && readFileSync(log, 'utf8').split('\n').includes(operation)) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`the plugin never started its ${operation}`);
}

/** Starts `dhv <args>` on the fixture's run, with the test's own journal, its output piped. */
function startDhv(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [DHV_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** `dhv check` of the fixture, running its create.path check alone in `scratch`. */
const checkArgs = (plugin: string, scratch: string) => [
  'check',
  plugin,
  '--only',
  'create.path',
  '--volumes-dir',
  scratch,
];

/** `dhv check` of the fixture, started and waiting in the plugin's first create. */
async function checkInCreate(onTestFinished: (fn: () => Promise<void>) => void) {
  const made = await setUp(onTestFinished);
  const child = startDhv(checkArgs(made.plugin, made.scratch), made.env);
  const done = finished(child);
  await started(made.plugin, 'create');
  return { ...made, child, done };
}

describe.concurrent('dhv check interrupted', () => {
  for (const [first, second, exitCode] of [
    ['SIGINT', 'SIGINT', 130],
    ['SIGTERM', 'SIGHUP', 143],
    ['SIGHUP', 'SIGTERM', 129],
  ] as const)
    test(`${first}, then ${second} to hurry the cleanup, leaves nothing: no plugin, no folder, no journal`, async ({
      onTestFinished,
    }) => {
      const { plugin, scratch, journal, child, done } = await checkInCreate(onTestFinished);
      child.kill(first);
      // The first signal ends the create; the cleanup runs the plugin's delete, which hangs.
      await started(plugin, 'delete');
      child.kill(second);
      const { code, stderr } = await done;
      expect(await survivors(await recordedPids(`${plugin}.pids`))).toEqual([]);
      expect(await readdir(scratch)).toEqual([]);
      expect(await readdir(journal).catch(() => [])).toEqual([]);
      expect(stderr).toContain(`${first}: stopping`);
      expect(stderr).toContain(`${second}: hurrying`);
      expect(code).toBe(exitCode);
    }, 120_000);

  test('after kill -9, the next dhv command kills its plugin, removes its folder, and says so', async ({
    onTestFinished,
  }) => {
    const { plugin, scratch, journal, env, child, done } = await checkInCreate(onTestFinished);
    const [sandbox] = await readdir(scratch);
    await killOnceJournalled(journal, child, done);
    // Left behind: the plugin, still waiting, and the run's folder.
    const pids = await recordedPids(`${plugin}.pids`);
    expect(await survivors(pids, 0)).toEqual(pids);
    expect(sandbox).toMatch(/^dhv-check-/);

    const next = await runDhv(['check', '--list'], { env });
    expect(next.exitCode).toBe(0);
    expect(next.stderr).toMatch(
      new RegExp(
        `^dhv: finished the cleanup of \`.*check ${plugin} .*\` \\(process ${child.pid}, killed before it could\\): killed process group ${pids[0]}, removed ${join(scratch, sandbox!)}$`,
        'm',
      ),
    );
    expect(await survivors(pids)).toEqual([]);
    expect(await readdir(scratch)).toEqual([]);
    expect(await readdir(journal).catch(() => [])).toEqual([]);
  }, 120_000);

  test('after kill -9, the next dhv command with --json says so in its document, and its stderr stays one document', async ({
    onTestFinished,
  }) => {
    const { plugin, scratch, journal, env, child, done } = await checkInCreate(onTestFinished);
    await killOnceJournalled(journal, child, done);
    const pids = await recordedPids(`${plugin}.pids`);

    // A command that fails, so that its error document is what stderr holds.
    const next = await runDhv(['volume', 'status', '--json', '--data-dir', join(scratch, 'no-data-dir')], { env });
    expect(next.exitCode).toBe(1);
    const { error } = JSON.parse(next.stderr) as { error: { code: string; warnings?: string[] } };
    expect(error.code).toBe('DATA_DIR_MISSING');
    expect(error.warnings).toEqual([
      expect.stringMatching(new RegExp(`^finished the cleanup of \`.*check ${plugin} .*\` \\(process ${child.pid}, `)),
    ]);
    expect(await survivors(pids)).toEqual([]);
    expect(await readdir(journal).catch(() => [])).toEqual([]);
  }, 120_000);
});

describe.concurrent('dhv plugin run interrupted', () => {
  for (const [signal, exitCode] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)
    test(`${signal} kills the plugin's process group before dhv exits, and leaves no journal`, async ({
      onTestFinished,
    }) => {
      const { plugin, scratch, journal, env } = await setUp(onTestFinished);
      const dataDir = join(scratch, '..', 'data');
      const child = startDhv(['plugin', 'run', plugin, 'create', '--data-dir', dataDir, '--volumes-dir', scratch], env);
      const done = finished(child);
      await started(plugin, 'create');
      child.kill(signal);
      const { code, stderr } = await done;
      expect(await survivors(await recordedPids(`${plugin}.pids`))).toEqual([]);
      expect(await readdir(journal).catch(() => [])).toEqual([]);
      expect(stderr).toContain(`${signal}: stopping`);
      expect(code).toBe(exitCode);
    }, 120_000);
});

describe('a signal while dhv exits', () => {
  test('changes nothing: dhv check ends with its own exit status, not killed by the signal', async ({
    onTestFinished,
  }) => {
    const dir = await tempDir('late-signal');
    onTestFinished(() => removeTempDir(dir));
    // Once dhv has begun to exit, a process of its own keeps sending it SIGINT until it is
    // gone: every instant of the exit gets one, the last milliseconds of teardown included.
    const preload = join(dir, 'late-sigint.cjs');
    await writeFile(
      preload,
      `process.on('exit', () => {
        require('node:child_process').spawn('/bin/sh', ['-c', 'while kill -INT "$1" 2>/dev/null; do :; done', 'sh', String(process.pid)], { detached: true, stdio: 'ignore' }).unref();
      });`,
    );
    const scratch = join(dir, 'scratch');
    await mkdir(scratch);
    const run = await runDhv(
      ['check', REFERENCE_MKDIR, '--only', 'discovery.fingerprint-succeeds', '--volumes-dir', scratch],
      { env: { NODE_OPTIONS: `--require ${preload}`, DHV_CLEANUP_JOURNAL: join(dir, 'journal') } },
    );
    expect({ exitCode: run.exitCode, signal: run.signal }).toEqual({ exitCode: 0, signal: null });
  }, 60_000);
});

describe('an exception nothing caught', () => {
  test('releases what the journal lists before the process ends: the process group and the folder', async ({
    onTestFinished,
  }) => {
    const dir = await tempDir('crash');
    onTestFinished(() => removeTempDir(dir));
    const journal = join(dir, 'journal');
    // A dhv process in small: it makes a folder and starts a process group through its
    // journal, then throws where nothing catches it.
    const script = `
      import { spawn } from 'node:child_process';
      import { CleanupJournal, releaseJournalOnCrash } from '@dhv/sdk/host';
      releaseJournalOnCrash((line) => process.stderr.write(line + '\\n'));
      const journal = CleanupJournal.forThisProcess();
      const { path } = await journal.makeFolder(${JSON.stringify(dir)}, 'made-');
      const child = spawn('/bin/sleep', ['600'], { detached: true, stdio: 'ignore' });
      journal.recordProcessGroup(child.pid);
      child.unref();
      console.log(JSON.stringify({ path, pid: child.pid }));
      setImmediate(() => { throw new Error('nobody caught this'); });
    `;
    const run = await execa(process.execPath, ['--input-type=module', '-e', script], {
      cwd: REPO_ROOT,
      env: { ...process.env, DHV_CLEANUP_JOURNAL: journal },
      reject: false,
    });
    const made = JSON.parse(run.stdout) as { path: string; pid: number };
    onTestFinished(() => killAll([made.pid]));
    expect(run.stderr).toContain('internal error: Error: nobody caught this');
    expect(run.exitCode).toBe(1);
    expect(await survivors([made.pid])).toEqual([]);
    expect(existsSync(made.path)).toBe(false);
    expect(await readdir(journal).catch(() => [])).toEqual([]);
  }, 60_000);
});

/** Processes whose command line names `needle` (the plugins of a run, by their folder). */
function processesMentioning(needle: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmdline.includes(needle)) found.push(`${pid} ${cmdline}`);
    } catch {
      // Exited meanwhile.
    }
  }
  return found;
}

/**
 * Sends each signal once the command has taken the one before (it says so on stderr):
 * signals sent back to back reach the process as one. A command that never says so gets
 * the next after 10 s.
 */
async function signalInTurn(child: ChildProcess, signals: readonly NodeJS.Signals[], stderr: () => string) {
  for (const [i, signal] of signals.entries()) {
    if (i > 0)
      for (let n = 0; n < 400 && !stderr().includes(`${signals[0]}: stopping`) && child.exitCode === null; n++)
        await new Promise((r) => setTimeout(r, 25));
    child.kill(signal);
  }
}

/** The demo's steps, as it prints them: each a phase a Ctrl-C may come in. */
const DEMO_PHASES = [
  'A temporary agent in',
  'Fingerprint the plugins',
  'Create volume test',
  'Write a file into each volume',
  'Restart the agent after a simulated host reboot',
  'Delete volume test',
];

describe.skipIf(skipUnless('interrupting dhv demo with dhv-loopback', loopDevices()))(
  'dhv demo interrupted twice (root, dhv-loopback)',
  () => {
    for (const phase of DEMO_PHASES)
      test(`at "${phase}": no process, mount, loop device, folder, record or journal of the run is left`, async ({
        onTestFinished,
      }) => {
        const dir = await tempDir('demo-interrupt');
        onTestFinished(() => removeTempDir(dir));
        const journal = join(dir, 'journal');
        // The demo makes its folder in TMPDIR: this test's own, so it judges only what its run made.
        const env = { ...process.env, NO_COLOR: '1', TMPDIR: dir, DHV_CLEANUP_JOURNAL: journal };
        const child = spawn(process.execPath, [DHV_BIN, 'demo'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        const done = finished(child);
        for (let i = 0; i < 12_000 && !stdout.includes(`==> ${phase}`) && child.exitCode === null; i++)
          await new Promise((r) => setTimeout(r, 25));
        await signalInTurn(child, ['SIGINT', 'SIGINT'], () => stderr);
        const { code } = await done;
        expect(stdout).toContain(`==> ${phase}`);
        expect(processesMentioning(dir)).toEqual([]);
        expect(mountPointsAtOrBelow(dir)).toEqual([]);
        expect(loopDeviceNamesBackedBelow(dir)).toEqual([]);
        expect(await volumesDiskFoldersBelow('dhv-loopback', dir)).toEqual([]);
        expect(await volumesDiskFoldersBelow('dhv-mkdir', dir)).toEqual([]);
        expect((await readdir(dir)).filter((name) => name.startsWith('dhv-demo-'))).toEqual([]);
        expect(await readdir(journal).catch(() => [])).toEqual([]);
        expect(code).toBe(130);
      }, 300_000);
  },
);

/** The catalogue's areas as `dhv check` runs them, each a phase a Ctrl-C may come in. */
const CHECK_AREAS = ['discovery', 'environment', 'create', 'delete', 'errors', 'budgets', 'safety', 'tasks', 'explore'];

/**
 * Runs `dhv check` of dhv-loopback on the `area` of the catalogue, sends `signals` once it is
 * in that area (each after the command has taken the one before), and finds nothing of the
 * run left: no process, mount, loop device, folder, record or journal. Returns the exit code.
 */
async function interruptCheck(
  area: string,
  signals: readonly NodeJS.Signals[],
  onTestFinished: (fn: () => Promise<void>) => void,
): Promise<number | null> {
  const dir = await tempDir('check-interrupt');
  onTestFinished(() => removeTempDir(dir));
  const scratch = join(dir, 'scratch');
  await mkdir(scratch);
  const journal = join(dir, 'journal');
  const env = { ...process.env, NO_COLOR: '1', DHV_CLEANUP_JOURNAL: journal };
  const child = startDhv(
    ['check', REFERENCE_LOOPBACK, '--only', area, '--capacity-max', '16MiB', '--volumes-dir', scratch],
    env,
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = finished(child);
  // Once the first check of the area has been judged the rest of it runs; the explore
  // checks share one exploration, judged at its end: it runs once it has mounted a volume.
  const inPhase = () =>
    area === 'explore' ? mountPointsAtOrBelow(scratch).length > 0 : new RegExp(`^\\S+ +${area}\\.`, 'm').test(stdout);
  for (let i = 0; i < 12_000 && !inPhase() && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 25));
  const signalled = performance.now();
  await signalInTurn(child, signals, () => stderr);
  const { code } = await done;
  expect(processesMentioning(scratch)).toEqual([]);
  expect(mountPointsAtOrBelow(dir)).toEqual([]);
  expect(loopDeviceNamesBackedBelow(dir)).toEqual([]);
  expect(await volumesDiskFoldersBelow('dhv-loopback', dir)).toEqual([]);
  expect(await readdir(scratch)).toEqual([]);
  expect(await readdir(journal).catch(() => [])).toEqual([]);
  console.log(
    `${area}, ${signals.join(' ')}: exited ${Math.round(performance.now() - signalled)} ms after the signals`,
  );
  return code;
}

describe.skipIf(skipUnless('interrupting dhv check of dhv-loopback', loopDevices()))(
  'dhv check of dhv-loopback interrupted (root)',
  () => {
    for (const area of CHECK_AREAS)
      test(`twice in its ${area} area: no process, mount, loop device, folder, record or journal of the run is left`, async ({
        onTestFinished,
      }) => {
        // Interrupted, unless the area was over before the signals came.
        expect([0, 130]).toContain(await interruptCheck(area, ['SIGINT', 'SIGINT'], onTestFinished));
      }, 300_000);

    for (const [signal, area, exitCode] of [
      ['SIGTERM', 'create', 143],
      ['SIGHUP', 'delete', 129],
    ] as const)
      test(`${signal} once, in its ${area} area: the full cleanup runs and nothing of the run is left`, async ({
        onTestFinished,
      }) => {
        expect([0, exitCode]).toContain(await interruptCheck(area, [signal], onTestFinished));
      }, 300_000);
  },
);

/** Whether a journal file in `dir` holds `text`. */
function journalLists(dir: string, text: string): boolean {
  try {
    return readdirSync(dir).some((f) => readFileSync(join(dir, f), 'utf8').includes(text));
  } catch {
    return false;
  }
}

/**
 * Kills dhv outright (kill -9) once its plugin's process group is in its journal: a group is
 * journalled just after its plugin starts (it has no ID before).
 */
async function killOnceJournalled(journal: string, child: ChildProcess, done: Promise<unknown>): Promise<void> {
  for (const deadline = Date.now() + 15_000; !journalLists(journal, '"kind":"process-group"');) {
    if (Date.now() > deadline) throw new Error(`no process group in the journal ${journal} within 15 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
  child.kill('SIGKILL');
  await done;
}
