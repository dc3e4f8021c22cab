import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { spawnPlugin } from './spawn-plugin.js';
import { outputText } from './plugin-run.js';
import { PluginDir } from '../__fixtures__/plugins.js';
import { signalProcess } from '../helpers/signals.js';

/** spawnPlugin's PluginRun says what the plugin was given and who it left holding its output. */

let dir: PluginDir;
const holders = new Set<number>();
beforeEach(async () => {
  dir = await PluginDir.create();
});
afterEach(async () => {
  const pids = [...holders];
  holders.clear();
  for (const pid of pids) signalProcess(pid, 'SIGKILL');
  await dir.cleanup();
});

/** Not gone and not a zombie waiting to be reaped. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * A SIGKILL takes effect once the process has let go of its memory: `BIG_SLEEPER`, a helper that
 * holds 256 MiB, is still running some 40 ms after it (an idle one, a fraction of a millisecond).
 */
const BIG_SLEEPER = `/usr/bin/perl -e '$x = "x" x (256 * 1048576); sleep 600' </dev/null >/dev/null 2>&1 &`;

describe('spawnPlugin', () => {
  it('records the argv and environment given, and the output as the bytes written', async () => {
    const p = await dir.bash('p', 'printf "%s \\xff" "$1"; printf "%s" "$DHV_X" >&2');
    const run = await spawnPlugin(p, ['create'], { DHV_X: 'x' }, { timeoutMs: 10_000 });
    expect(run).toMatchObject({ argv: ['create'], env: { DHV_X: 'x' }, exitCode: 0, outputHeldOpen: false });
    expect(run.outputHolders).toEqual([]);
    expect([...run.stdout]).toEqual([...Buffer.from('create '), 0xff]);
    expect(outputText(run.stdout)).toBe('create \ufffd');
    expect(outputText(run.stderr)).toBe('x');
  });

  it('names and kills a leftover still holding the output once the grace after exit is over', async () => {
    const p = await dir.bash(
      'p',
      '/usr/bin/setsid /bin/sleep 30 >/dev/null &\n/usr/bin/setsid /bin/sleep 31 &\necho done',
    );
    const run = await spawnPlugin(p, ['fingerprint'], {}, { timeoutMs: 60_000, outputGraceMs: 200 });
    for (const h of run.outputHolders) holders.add(h.pid);
    expect(run).toMatchObject({ exitCode: 0, timedOut: false, outputHeldOpen: true });
    expect(outputText(run.stdout)).toBe('done\n');
    // One leftover holds stderr alone, the other both pipes: three holdings by two processes.
    expect(run.outputHolders.map((h) => h.holds).sort()).toEqual(['stderr', 'stderr', 'stdout']);
    expect(new Set(run.outputHolders.map((h) => h.pid)).size).toBe(2);
    expect(run.outputHolders.every((h) => h.command.endsWith('/sleep'))).toBe(true);
    for (const pid of holders) expect(running(pid)).toBe(false);
  });

  it('is over once what the plugin left running in its group is gone, not when it was signalled', async () => {
    const p = await dir.bash(
      'p',
      [
        BIG_SLEEPER,
        // Out once it holds the memory (statm's second field: resident pages).
        'for ((i = 0; i < 1000000; i++)); do read -r _ rss _ </proc/$!/statm && ((rss > 60000)) && break; done',
        'echo done',
      ].join('\n'),
    );
    for (let i = 0; i < 2; i++) {
      const run = await spawnPlugin(p, ['delete'], {}, { timeoutMs: 60_000 });
      for (const left of run.leftRunning ?? []) holders.add(left.pid);
      expect(run.leftRunning?.map((left) => left.command)).toEqual(['/usr/bin/perl']);
      expect(run.leftRunning!.filter((left) => running(left.pid))).toEqual([]);
    }
  });

  it('is over once the group it killed at the deadline is gone, not when it was signalled', async () => {
    const p = await dir.bash('p', [BIG_SLEEPER, 'echo $! >"$0.helper"', 'exec /bin/sleep 600'].join('\n'));
    for (let i = 0; i < 2; i++) {
      const run = await spawnPlugin(p, ['create'], {}, { timeoutMs: 1_000 });
      const helper = Number(readFileSync(`${p}.helper`, 'utf8'));
      holders.add(helper);
      expect(run.timedOut).toBe(true);
      expect(running(helper)).toBe(false);
    }
  });

  it('does not call a plugin that answered before its deadline a holder of its output: a helper closing it a moment later is no fault', async () => {
    // The plugin exits at once; its helper keeps the output 2.5 s, past the 1.5 s deadline (a bash
    // start alone took more than 100 ms at load 17, when this deadline was 100 ms).
    const p = await dir.bash('p', '{ /bin/sleep 2.5; } &\necho done');
    const run = await spawnPlugin(p, ['create'], {}, { timeoutMs: 1_500, outputGraceMs: 5_000 });
    expect(run).toMatchObject({ exitCode: 0, timedOut: false, outputHeldOpen: false });
    expect(run.outputHolders).toEqual([]);
    expect(outputText(run.stdout)).toBe('done\n');
  });
});
