import { chmod, copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isUuid } from '@dhv/sdk/plugin';
import { builtPlugin, HOSTILE_FIXTURES, runDhv, type DhvRun, tempDir, removeTempDir } from './support/kit.js';
import { median } from './support/median.js';
import { waitForProcessesMentioning } from './support/processes.js';
import { pick, seededRandom } from './support/seeded-random.js';
import { testSeed } from './support/seed.js';

/**
 * Crashes and lost writes: a seeded sequence of 48 creates and deletes
 * through the real `dhv` executable, with `kill -9` of `dhv` at seeded points, each
 * followed by `dhv agent restart`. After every restart: client state loads, every
 * volume in it is restored and in HostVolumes, and nothing is on disk that state does
 * not know except the orphans `dhv agent gc` lists (and then removes).
 *
 * The seed fixes the operations, the plugins, which runs are killed and how far into
 * them; replay a failure with DHV_CRASH_SEED=<seed>. The exact instant a kill lands
 * still depends on the machine's speed, so a replay exercises the same schedule.
 */

const SEED = testSeed('DHV_CRASH_SEED', 831150, 'test/reliability-crash.test.ts');
/**
 * Almost all of the time is `dhv` start-up, and what is tested is what a kill leaves: an
 * operation that is not killed only builds the state the next kill lands on. So few
 * operations, two in five of them killed, each kill timed inside its kind's typical run so
 * that it lands. 48 operations timed by one median of every kind landed 8 kills of 19 on the
 * pinned seed (slow-mkdir's creates and fast deletes shared a typical time, and late kills of
 * fast runs came after they ended); 32 timed per kind land more with a third fewer `dhv`
 * processes. A fresh seed each CI run (DHV_RANDOM_SEEDS=1) gives the breadth;
 * DHV_CRASH_OPERATIONS=200 a longer run.
 */
const OPERATIONS = Number(process.env.DHV_CRASH_OPERATIONS ?? 32);
const PARALLEL = 2;
const KILL_PROBABILITY = 0.4;
/** Of the restarts, how many are themselves killed and repeated. */
const KILL_RESTART_PROBABILITY = 0.1;

/** Every record of client state (one `<id>.json` per volume), as the restore reads it. */
async function readClientState(dataDir: string): Promise<VolumeJson[]> {
  const dir = join(dataDir, 'client', 'host_volumes');
  const names = (await readdir(dir).catch(() => [] as string[]))
    .filter((n) => n.endsWith('.json') && !n.startsWith('.'))
    .sort();
  return Promise.all(
    names.map(async (n) => {
      const record = JSON.parse(await readFile(join(dir, n), 'utf8')) as {
        ID: string;
        HostPath: string;
        CreateReq: { Name: string };
      };
      return { ID: record.ID, Name: record.CreateReq.Name, HostPath: record.HostPath, State: 'ready' };
    }),
  );
}

interface VolumeJson {
  ID: string;
  Name: string;
  HostPath: string;
  State: string;
}

describe(`kill -9 of dhv during ${OPERATIONS} creates and deletes (DHV_CRASH_SEED=${SEED})`, () => {
  let sandbox: string;
  let dataDir: string;
  let pluginDir: string;
  let volumesDir: string;
  let specDir: string;
  let flags: string[];

  beforeAll(async () => {
    sandbox = await tempDir('crash');
    dataDir = join(sandbox, 'data');
    pluginDir = join(sandbox, 'plugins');
    volumesDir = join(dataDir, 'host_volumes');
    specDir = join(sandbox, 'specs');
    await mkdir(pluginDir, { recursive: true });
    await mkdir(specDir);
    await copyFile(builtPlugin('dhv-mkdir'), join(pluginDir, 'dhv-mkdir'));
    await copyFile(join(HOSTILE_FIXTURES, 'slow-mkdir.sh'), join(pluginDir, 'slow-mkdir'));
    await chmod(join(pluginDir, 'slow-mkdir'), 0o755);
    flags = ['--data-dir', dataDir, '--plugin-dir', pluginDir];
  }, 120_000);

  afterAll(async () => {
    await waitForProcessesMentioning(pluginDir, 5_000);
    await removeTempDir(sandbox);
  });

  it('state always loads, every recorded volume is restored and in HostVolumes, and anything else on disk is an orphan gc lists and removes', async () => {
    const started = performance.now();
    const random = seededRandom(SEED);
    const durations = new Map<string, number[]>(); // kind of run -> how long its unkilled runs took
    const known = new Map<string, string>(); // id -> name, as far as finished commands tell
    const tally = {
      creates: 0,
      deletes: 0,
      kills: 0,
      killedRestarts: 0,
      restarts: 0,
      orphansFound: 0,
      orphansRemoved: 0,
    };
    let step = 'setup';

    const dhv = async (args: string[], killAfterMs?: number): Promise<DhvRun> =>
      runDhv([...args, ...flags], killAfterMs === undefined ? {} : { killAfterMs });
    const fail = (what: string, run?: DhvRun): never => {
      throw new Error(
        `${what}\n  at ${step}\n  replay with DHV_CRASH_SEED=${SEED}` +
          (run
            ? `\n  exit ${run.exitCode ?? run.signal}\n  stdout: ${run.stdout.slice(0, 2000)}\n  stderr: ${run.stderr.slice(0, 2000)}`
            : ''),
      );
    };
    const json = <T>(run: DhvRun, what: string): T => {
      if (run.exitCode !== 0) fail(`${what} failed`, run);
      try {
        return JSON.parse(run.stdout) as T;
      } catch {
        return fail(`${what} printed no JSON`, run);
      }
    };

    /** Restart (perhaps killed once first), then check every invariant and remove orphans through gc. */
    const restartAndCheck = async () => {
      await waitForProcessesMentioning(pluginDir);
      if (random() < KILL_RESTART_PROBABILITY) {
        tally.killedRestarts++;
        await dhv(['agent', 'restart', '--json'], 50 + random() * 400);
        await waitForProcessesMentioning(pluginDir);
      }
      tally.restarts++;
      const restart = json<{ Restored: Array<{ ID: string }>; Failed: unknown[] }>(
        await dhv(['agent', 'restart', '--json']),
        'agent restart',
      );
      if (restart.Failed.length > 0) fail(`restore failed for ${JSON.stringify(restart.Failed)}`);
      const [nodeRun, gcRun] = await Promise.all([dhv(['node', 'status', '--json']), dhv(['agent', 'gc', '--json'])]);
      const node = json<{ HostVolumes: Record<string, { ID: string; Path: string }> }>(nodeRun, 'node status');
      // Client state as it is on disk, read directly: the truth the agent's answers are checked against.
      const volumes = await readClientState(dataDir);
      const gc = json<{ Orphans: Array<{ ID: string; RemoveCommand: string }> }>(gcRun, 'agent gc');

      const inState = new Set(volumes.map((v) => v.ID));
      const restored = restart.Restored.map((v) => v.ID).sort();
      if (JSON.stringify(restored) !== JSON.stringify([...inState].sort()))
        fail(`restored ${restored.join(', ')}; state holds ${[...inState].sort().join(', ')}`);
      for (const v of volumes) {
        const reported = node.HostVolumes[v.Name];
        if (reported?.ID !== v.ID || reported.Path !== v.HostPath)
          fail(`HostVolumes[${v.Name}] is ${JSON.stringify(reported)}, state has ${v.ID} at ${v.HostPath}`);
      }
      if (Object.keys(node.HostVolumes).length !== volumes.length)
        fail(`HostVolumes has ${Object.keys(node.HostVolumes).length} volumes, state ${volumes.length}`);
      const onDisk = (await readdir(volumesDir).catch(() => [] as string[])).filter(isUuid).sort();
      for (const id of inState)
        if (!onDisk.includes(id)) fail(`volume ${id} is in state but not on disk after restore`);
      const unknown = onDisk.filter((id) => !inState.has(id));
      const orphans = gc.Orphans.map((o) => o.ID).sort();
      if (JSON.stringify(unknown) !== JSON.stringify(orphans))
        fail(`on disk but not in state: ${unknown.join(', ') || 'none'}; gc lists: ${orphans.join(', ') || 'none'}`);
      for (const o of gc.Orphans)
        if (!o.RemoveCommand.includes('agent gc --remove'))
          fail(`orphan ${o.ID} comes without the command that removes it`);
      if (orphans.length > 0) {
        tally.orphansFound += orphans.length;
        const removed = json<{ Removed: string[] }>(
          await dhv(['agent', 'gc', '--remove', '--json']),
          'agent gc --remove',
        );
        if (JSON.stringify([...removed.Removed].sort()) !== JSON.stringify(orphans))
          fail(`gc --remove removed ${removed.Removed.join(', ')}, not ${orphans.join(', ')}`);
        tally.orphansRemoved += removed.Removed.length;
        const left = (await readdir(volumesDir)).filter((id) => isUuid(id) && !inState.has(id));
        if (left.length > 0) fail(`still on disk after gc --remove: ${left.join(', ')}`);
      }
      known.clear();
      for (const v of volumes) known.set(v.ID, v.Name);
    };

    // Two streams at once (on one data dir, as two operators would): half the wall time on two cores.
    for (let i = 0; i < OPERATIONS; i += PARALLEL) {
      const batch: Array<{
        deleting: boolean;
        kind: string;
        args: string[];
        killAfterMs: number | undefined;
        what: string;
      }> = [];
      const picked = new Set<string>();
      for (let j = i; j < Math.min(i + PARALLEL, OPERATIONS); j++) {
        const candidates = [...known.keys()].filter((id) => !picked.has(id)).sort();
        const deleting = candidates.length > 0 && random() < 0.45;
        const plugin = pick(random, ['mkdir', 'dhv-mkdir', 'slow-mkdir']);
        const kill = random() < KILL_PROBABILITY;
        // A fraction of a typical run of this kind: half the kills early (start-up, locks), half late
        // (plugin, state write). Timed by the kind's own runs (slow-mkdir's creates take half a second
        // more than a delete), and ending before the run does, nearly every kill lands: a kill timed
        // past the end kills nothing, and its run only builds state.
        const killAt = random() < 0.5 ? 0.1 + random() * 0.5 : 0.6 + random() * 0.35;
        const kind = deleting ? 'delete' : plugin;
        const seen = durations.get(kind) ?? [];
        const typicalMs = seen.length > 0 ? median(seen.slice(-10)) : plugin === 'slow-mkdir' && !deleting ? 950 : 450;
        const killAfterMs = kill ? killAt * typicalMs : undefined;
        const cut = kill ? `, killed after ${killAfterMs!.toFixed(0)} ms` : '';
        if (deleting) {
          const id = pick(random, candidates);
          picked.add(id);
          batch.push({
            deleting,
            kind,
            args: ['volume', 'delete', id, '--json'],
            killAfterMs,
            what: `operation ${j}: delete ${id}${cut}`,
          });
          tally.deletes++;
        } else {
          const name = `v${j}`;
          const spec = join(specDir, `${name}.hcl`);
          await writeFile(spec, `type = "host"\nname = "${name}"\nplugin_id = "${plugin}"\n`);
          batch.push({
            deleting,
            kind,
            args: ['volume', 'create', spec, '--json'],
            killAfterMs,
            what: `operation ${j}: create ${name} with ${plugin}${cut}`,
          });
          tally.creates++;
        }
      }
      step = batch.map((b) => b.what).join(' | ');
      const runs = await Promise.all(batch.map((b) => dhv(b.args, b.killAfterMs)));
      let killed = false;
      runs.forEach((run, k) => {
        if (run.killed) {
          killed = true;
          tally.kills++;
          return;
        }
        const kind = batch[k]!.kind;
        durations.set(kind, [...(durations.get(kind) ?? []), run.durationMs]);
        if (batch[k]!.deleting) known.delete(json<{ Deleted: string }>(run, 'volume delete').Deleted);
        else {
          const out = json<{ Volume: VolumeJson }>(run, 'volume create');
          known.set(out.Volume.ID, out.Volume.Name);
        }
      });
      if (killed) await restartAndCheck();
    }
    step = 'final restart';
    await restartAndCheck();

    console.log(
      `crash test (DHV_CRASH_SEED=${SEED}): ${JSON.stringify(tally)} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    expect(tally.kills).toBeGreaterThan(0);
    expect(tally.creates + tally.deletes).toBe(OPERATIONS);
  }, 900_000);
});
