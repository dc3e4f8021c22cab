import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { formatSize } from '@dhv/sdk';
import { ENV } from '@dhv/sdk/plugin';
import { restoreRequest, type CreateResult, type PluginRun } from '@dhv/sdk/client';
import { readCreatedBytes, readCreatedPath } from '../inspect.js';
import { outsideVolumesDirWarning } from '../outside-volumes-dir.js';
import { describeRun, succeeded } from '../raw-run.js';
import { simulateReboot } from '@dhv/sdk/host';
import type { Check, CheckContext, CreateInput } from '../types.js';
import { markerProblem, writeMarker } from './volume-files.js';
import { OutsideSandboxError, openInsideSandbox, outsideSandboxSkip } from '../sandbox-writes.js';
import { NEEDS_WORKING_CREATE } from './needs-working-create.js';
import { defaultCapacityCannotJudge } from './default-capacity.js';
import { bytesWithinCapacity, declaredParameters, expands, largerCapacity } from './create-capacity.js';

const REF = 'PROTOCOL.md § create';
const CONCURRENT_VOLUMES = 8;
const CONCURRENT_SAME = 4;

/** One create exactly as the agent runs it, with its cleanup registered first; the output is left for the caller to judge. */
async function rawCreate(ctx: CheckContext, request: CreateInput): Promise<PluginRun> {
  let createdPath = '';
  ctx.cleanup(() => ctx.delete(ctx.deleteRequest(request, createdPath)));
  const run = await ctx.runAsAgent('create', request);
  const path = readCreatedPath(run.stdout);
  if (path.ok) createdPath = path.value;
  return run;
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/** Whether `path` is the root of a filesystem mounted there (its device differs from its parent's). */
async function isMountPoint(path: string): Promise<boolean> {
  const [self, parent] = await Promise.all([stat(path), stat(dirname(path))]);
  return self.dev !== parent.dev || self.ino === parent.ino;
}

/**
 * Starts a process that keeps the volume busy, as a workload does: its working directory
 * is inside, and it holds a file there open for writing. Its end is registered as
 * cleanup before it starts.
 */
async function occupy(ctx: CheckContext, volumePath: string): Promise<void> {
  let handle;
  try {
    handle = await openInsideSandbox(ctx.sandboxScope, volumePath, '.dhv-check-open-file', true);
  } catch (err) {
    if (err instanceof OutsideSandboxError) ctx.skip(outsideSandboxSkip(err));
    throw err;
  }
  let child: ReturnType<typeof spawn> | undefined;
  ctx.cleanup(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
  });
  try {
    child = spawn('/bin/sleep', ['600'], { cwd: volumePath, stdio: ['ignore', handle.fd, 'ignore'] });
    await new Promise<void>((resolve, reject) => {
      child!.once('spawn', resolve);
      child!.once('error', reject);
    });
  } catch (err) {
    ctx.skip(`could not start a process inside the volume (/bin/sleep): ${(err as Error).message}`);
  } finally {
    await handle.close();
  }
}

function samePathOrFail(ctx: CheckContext, first: string, again: CreateResult, what: string): void {
  if (again.path !== first)
    ctx.fail(`${what} returned ${JSON.stringify(again.path)}, but the first create returned ${JSON.stringify(first)}`);
}

export const createChecks: Check[] = [
  {
    id: 'create.path',
    area: 'create',
    title: 'create returns an absolute "path" that exists and is a directory.',
    protocolRef: REF,
    severity: 'required',
    gradeReason:
      'the path is what workloads mount: without an existing absolute directory no allocation can use the volume',
    asks: "1 volume at the capacities given (none given: none, else dhv check's fallback capacity when the plugin refuses none)",
    needs: ['environment.dhv-only'],
    async run(ctx: CheckContext) {
      const run = await rawCreate(ctx, ctx.newVolume());
      if (!succeeded(run)) {
        const params = declaredParameters(ctx);
        ctx.fail(
          `create failed${params ? ` with the parameters the plugin declares (${params})` : ''}: ${describeRun(run)}`,
        );
      }
      const path = readCreatedPath(run.stdout);
      if (!path.ok) ctx.fail(path.problem);
      if (!isAbsolute(path.value)) ctx.fail(`"path" is ${JSON.stringify(path.value)}, which is not absolute`);
      if (!(await isDirectory(path.value)))
        ctx.fail(`"path" is ${JSON.stringify(path.value)}, which is not an existing directory`);
      const outside = outsideVolumesDirWarning(path.value, ctx.volumesDir);
      if (outside !== undefined) ctx.warn(outside);
      const fallback = ctx.settings.fallbackCapacity;
      if (fallback !== undefined) ctx.skip(defaultCapacityCannotJudge(fallback));
    },
  },
  {
    id: 'create.bytes',
    area: 'create',
    title: 'create reports "bytes" as a non-negative JSON integer (0 when it cannot tell).',
    protocolRef: REF,
    severity: 'required',
    gradeReason:
      'Go decodes "bytes" into an int64: anything else makes the agent fail the create, however well the plugin did',
    asks: '1 volume at the capacities given',
    needs: ['environment.dhv-only'],
    async run(ctx: CheckContext) {
      const run = await rawCreate(ctx, ctx.newVolume());
      if (!succeeded(run)) ctx.skip(`create failed, so it reported no bytes: ${describeRun(run)}`);
      const bytes = readCreatedBytes(run.stdout);
      if (!bytes.ok) ctx.fail(bytes.problem);
      if (bytes.value < 0n) ctx.fail(`"bytes" is ${bytes.value}; a capacity cannot be negative`);
      ctx.note(`reports ${bytes.value} bytes (${formatSize(bytes.value)})`);
    },
  },
  bytesWithinCapacity,
  {
    id: 'create.idempotent',
    area: 'create',
    title: 'Repeating a create with the same inputs succeeds with the same path and keeps the data in the volume.',
    protocolRef: REF,
    severity: 'required',
    gradeReason:
      'the agent re-runs create for every volume at each start (restore): a create that fails or wipes the volume when it exists loses the volume or its data',
    asks: '1 volume at the capacities given, created 1 + --repeat times',
    needs: NEEDS_WORKING_CREATE,
    async run(ctx: CheckContext) {
      const request = ctx.newVolume();
      const first = await ctx.provision(request);
      const marker = await writeMarker(ctx, first.path);
      for (let i = 1; i <= ctx.settings.repeat; i++) {
        const again = await ctx.create(request);
        samePathOrFail(ctx, first.path, again, `repeat ${i}`);
        const lost = await markerProblem(first.path, marker);
        if (lost) ctx.fail(`after repeat ${i}, ${lost}`);
      }
      ctx.note(`${ctx.settings.repeat} repeats`);
    },
  },
  {
    id: 'create.concurrent-volumes',
    area: 'create',
    title: `${CONCURRENT_VOLUMES} concurrent creates of different volumes all succeed with distinct paths.`,
    protocolRef: REF,
    severity: 'required',
    gradeReason:
      "restore runs every volume's create at once, unbounded, and volume create runs in parallel for different volumes: a plugin that mixes them up loses volumes",
    asks: '8 volumes at once at the capacities given',
    needs: NEEDS_WORKING_CREATE,
    async run(ctx: CheckContext) {
      const requests = Array.from({ length: CONCURRENT_VOLUMES }, () => ctx.newVolume());
      const created = new Map<string, string>();
      ctx.cleanup(() =>
        Promise.allSettled(requests.map((r) => ctx.delete(ctx.deleteRequest(r, created.get(r.volumeId) ?? '')))),
      );
      const settled = await Promise.allSettled(
        requests.map(async (r) => {
          const result = await ctx.create(r);
          created.set(r.volumeId, result.path);
          return result;
        }),
      );
      const failures = settled.flatMap((s, i) =>
        s.status === 'rejected' ? [`volume ${i + 1}: ${(s.reason as Error).message}`] : [],
      );
      if (failures.length > 0) ctx.fail(`${failures.length} of ${CONCURRENT_VOLUMES} failed: ${failures.join('; ')}`);
      const paths = settled.map((s) => (s as PromiseFulfilledResult<CreateResult>).value.path);
      const shared = paths.filter((p, i) => paths.indexOf(p) !== i);
      if (shared.length > 0) ctx.fail(`different volumes were given the same path: ${[...new Set(shared)].join(', ')}`);
      for (const path of paths) if (!(await isDirectory(path))) ctx.fail(`${path} was returned but is not a directory`);
    },
  },
  {
    id: 'create.concurrent-same-volume',
    area: 'create',
    title: `${CONCURRENT_SAME} concurrent creates of the same volume all succeed with the same path.`,
    protocolRef: REF,
    severity: 'recommended',
    gradeReason:
      'the agent never runs two creates of one volume at once (the servers serialise operations per volume ID): only callers other than Nomad do',
    asks: '1 volume at the capacities given, created 4 times at once',
    needs: [...NEEDS_WORKING_CREATE, 'create.idempotent'],
    async run(ctx: CheckContext) {
      const request = ctx.newVolume();
      let createdPath = '';
      ctx.cleanup(() => ctx.delete(ctx.deleteRequest(request, createdPath)));
      const settled = await Promise.allSettled(Array.from({ length: CONCURRENT_SAME }, () => ctx.create(request)));
      const ok = settled
        .filter((s): s is PromiseFulfilledResult<CreateResult> => s.status === 'fulfilled')
        .map((s) => s.value);
      createdPath = ok[0]?.path ?? '';
      const failures = settled.flatMap((s) => (s.status === 'rejected' ? [(s.reason as Error).message] : []));
      if (failures.length > 0) ctx.fail(`${failures.length} of ${CONCURRENT_SAME} failed: ${failures.join('; ')}`);
      const paths = new Set(ok.map((r) => r.path));
      if (paths.size > 1) ctx.fail(`the same volume was given different paths: ${[...paths].join(', ')}`);
      if (!(await isDirectory(createdPath))) ctx.fail(`${createdPath} was returned but is not a directory`);
    },
  },
  {
    id: 'create.restore',
    area: 'create',
    title:
      'Creating a volume again after a restart (as after a host reboot: its mounts gone) succeeds with the same path and keeps its data.',
    protocolRef: 'PROTOCOL.md § What the agent does with volumes (restore on restart)',
    severity: 'required',
    gradeReason:
      'after a host reboot the agent re-runs create with the saved request: failing it leaves the volume unpublished, and wiping it loses the data',
    asks: '1 volume at the capacities given, created again after a simulated reboot',
    needs: [...NEEDS_WORKING_CREATE, 'create.idempotent'],
    async run(ctx: CheckContext) {
      const request = ctx.newVolume();
      const first = await ctx.provision(request);
      const marker = await writeMarker(ctx, first.path);
      try {
        await simulateReboot({
          scope: ctx.sandboxScope,
          paths: [ctx.volumesDir],
          imageFolders: [ctx.volumesDir],
        });
      } catch (err) {
        ctx.skip(`could not simulate the reboot: ${(err as Error).message}`);
      }
      const restored = await ctx.create(restoreRequest(request));
      samePathOrFail(ctx, first.path, restored, 'the restore');
      const lost = await markerProblem(restored.path, marker);
      if (lost) ctx.fail(`after the restore, ${lost}`);
    },
  },
  largerCapacity,
  expands,
  {
    id: 'create.volumes-dir-missing',
    area: 'create',
    title: `create works when the volumes dir (${ENV.volumesDir}) does not exist yet.`,
    protocolRef: 'PROTOCOL.md § Agent configuration (host_volumes_dir); § create',
    severity: 'required',
    gradeReason:
      'Nomad never creates host_volumes_dir: on a fresh node the first create is the first to see it missing, and a plugin that needs it fails there',
    asks: '1 volume at the capacities given, in a volumes dir not made yet',
    needs: NEEDS_WORKING_CREATE,
    async run(ctx: CheckContext) {
      const volumesDir = join(ctx.sandbox, 'volumes-not-made-yet');
      const run = await rawCreate(ctx, ctx.newVolume({ volumesDir }));
      if (!succeeded(run))
        ctx.fail(
          `create with a volumes dir that does not exist yet failed: ${describeRun(run)}; create it (with its parents' permissions in mind) on first use`,
        );
      const path = readCreatedPath(run.stdout);
      if (!path.ok) ctx.fail(path.problem);
      if (!(await isDirectory(path.value)))
        ctx.fail(`"path" is ${JSON.stringify(path.value)}, which is not an existing directory`);
    },
  },
  {
    id: 'create.restore-in-use',
    area: 'create',
    title:
      'Creating a volume again while it is in use (a process holds a file open inside it; for a plugin that mounts, while mounted and busy) succeeds with the same path and keeps the data.',
    protocolRef: 'PROTOCOL.md § What the agent does with volumes (restore on restart); § create (idempotent)',
    severity: 'required',
    gradeReason:
      'an agent restart re-runs create for every volume while its workloads keep running and using it: failing that unpublishes a live volume, and remaking it destroys the data under the workload',
    asks: '1 volume at the capacities given, created again while a process holds a file in it',
    needs: [...NEEDS_WORKING_CREATE, 'create.idempotent'],
    async run(ctx: CheckContext) {
      const request = ctx.newVolume();
      const first = await ctx.provision(request);
      const marker = await writeMarker(ctx, first.path);
      await occupy(ctx, first.path);
      const mounted = await isMountPoint(first.path);
      let again: CreateResult;
      try {
        again = await ctx.create(restoreRequest(request));
      } catch (err) {
        ctx.fail(`create of a volume in use${mounted ? ' (mounted and busy)' : ''} failed: ${(err as Error).message}`);
      }
      samePathOrFail(ctx, first.path, again, 'the create while in use');
      const lost = await markerProblem(first.path, marker);
      if (lost) ctx.fail(`after the create while in use, ${lost}`);
      if (mounted && !(await isMountPoint(first.path)))
        ctx.fail(
          `${first.path} was a mount point in use and is not one after the create: the workload lost its filesystem`,
        );
      ctx.note(
        mounted
          ? 'the volume is a mount point; it was busy during the create'
          : 'the volume is a plain directory; a file in it was open during the create',
      );
    },
  },
];
