import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Check, CheckContext } from '../types.js';
import { describeTask, TASK_MOUNT, TaskClient } from '../task-client.js';
import type { HostVolume } from '../../agent/agent.js';
import { NEEDS_WORKING_CREATE } from './needs-working-create.js';

const REF = 'PROTOCOL.md § What the agent does with volumes';
/**
 * A job's volume is made by the agent, which publishes only a plugin whose fingerprint
 * passes and then runs its create: without those every task check repeats their failure.
 */
const NEEDS_PUBLISHED_PLUGIN = [
  'discovery.fingerprint-succeeds',
  'discovery.fingerprint-fast',
  'discovery.version-present',
  'discovery.version-valid',
  ...NEEDS_WORKING_CREATE,
];
const ASKS =
  '1 volume at the capacities given, mounted into a task that runs as nobody on a simulated client of its own';
/**
 * How long a task that holds its volume runs: the check stops it long before, and a task a
 * killed `dhv check` (kill -9) could not stop ends by itself.
 */
const TASK_LIFETIME_S = 300;
/** The file a task writes into its volume. */
const WRITTEN = 'dhv-check-task-file';

/** A task that says who it is, then writes into its volume and says whether it could. */
const WRITE_SCRIPT = `echo "uid=$(id -u) gid=$(id -g)"; echo task > ${TASK_MOUNT}/${WRITTEN} && echo written`;

/** Its uid and gid, as the task printed them. */
function taskIdentity(stdout: string): { uid: string; gid: string } {
  const m = /uid=(\d+) gid=(\d+)/.exec(stdout);
  return { uid: m?.[1] ?? '65534', gid: m?.[2] ?? '65534' };
}

/** The volume's root as a task's user meets it: `mode 0700, owned by 0:0`. */
async function describeRoot(volume: HostVolume): Promise<string> {
  const s = await stat(volume.HostPath).catch(() => undefined);
  if (!s) return `${volume.HostPath} (no longer there)`;
  return `${volume.HostPath}, mode 0${(s.mode & 0o7777).toString(8)} owned by ${s.uid}:${s.gid}`;
}

/** Runs the writing task on a fresh volume: what it printed, and whether it wrote. */
async function tryWrite(client: TaskClient, volume: HostVolume) {
  const { alloc } = await client.runTask(volume, WRITE_SCRIPT);
  const stdout = await client.output(alloc);
  const stderr = await client.errors(alloc);
  const wrote = stdout.includes('written') && existsSync(join(volume.HostPath, WRITTEN));
  return { alloc, stdout, stderr, wrote, identity: taskIdentity(stdout) };
}

/**
 * What a job's volume needs so that the task's user can write it, found by asking the
 * plugin for a volume owned by that user (`uid`, `gid`, as dhv-mkdir and Nomad's mkdir take
 * them): `fixed` when such a volume is writable to the task.
 */
async function whatFixesIt(client: TaskClient, uid: string, gid: string): Promise<{ fixed: boolean; advice: string }> {
  const asked = `parameters { uid = "${uid}" gid = "${gid}" }`;
  let volume: HostVolume;
  try {
    volume = await client.createVolume({ uid, gid });
  } catch (err) {
    return {
      fixed: false,
      advice:
        `The plugin refused a volume with ${asked} (${(err as Error).message.split('\n')[0]}): ` +
        "take parameters (such as uid, gid or mode) with which an operator makes a volume the task's user can write, and document them.",
    };
  }
  const again = await tryWrite(client, volume);
  if (again.wrote)
    return {
      fixed: true,
      advice: `With ${asked} in the volume spec the task could write: tell your users to set them (or a mode) for volumes that unprivileged tasks write.`,
    };
  return {
    fixed: false,
    advice:
      `The plugin took ${asked}, yet the task still could not write (${writeFailure(again)}; the volume's root: ${await describeRoot(volume)}): ` +
      "apply uid, gid or mode to the volume's root, so that an operator can give the volume to the task's user.",
  };
}

/** Why the task's write failed, in the words it printed. */
function writeFailure(run: Awaited<ReturnType<typeof tryWrite>>): string {
  return run.stderr.trim() !== '' ? run.stderr.trim() : describeTask(run.stdout, run.stderr, run.alloc);
}

/** A long-running task that writes a token once, and on every later start says whether it finds it. */
function keeperScript(token: string): string {
  const file = `${TASK_MOUNT}/${WRITTEN}`;
  return `if [ -e ${file} ]; then echo "found $(cat ${file})"; else echo ${token} > ${file} && echo wrote; fi; exec sleep ${TASK_LIFETIME_S}`;
}

/** Starts the keeper on a fresh volume and waits until it wrote its token. */
async function keeperWrote(client: TaskClient, token: string) {
  const volume = await client.createVolume();
  const { alloc, jobId } = await client.runTask(volume, keeperScript(token), { type: 'service' });
  await client.waitForLine(alloc, (t) => t.includes('wrote'), 'write into its volume');
  return { volume, alloc, jobId };
}

export const taskChecks: readonly Check[] = [
  {
    id: 'tasks.unprivileged-write',
    area: 'tasks',
    title:
      "A task running as nobody under the exec driver writes into a fresh volume on a default client (the driver's default capabilities).",
    protocolRef: REF,
    severity: 'required',
    gradeReason:
      'a volume is made for jobs to write: one that a task cannot write on a Nomad client as shipped is of no use to any job',
    asks: ASKS,
    needs: NEEDS_PUBLISHED_PLUGIN,
    async run(ctx: CheckContext) {
      const client = await TaskClient.start(ctx);
      const volume = await client.createVolume();
      const run = await tryWrite(client, volume);
      const { uid, gid } = run.identity;
      if (!run.wrote)
        ctx.fail(
          `a task as nobody (uid ${uid}, gid ${gid}) could not write into a fresh volume on a default client, whose exec driver gives it cap_dac_override: ${writeFailure(run)}; the volume's root: ${await describeRoot(volume)}`,
        );
      ctx.note(`a task as nobody (uid ${uid}) wrote into the volume's root, ${await describeRoot(volume)}`);
    },
  },
  {
    id: 'tasks.unprivileged-write-hardened',
    area: 'tasks',
    title:
      'On a hardened client (the exec driver without dac_override) a task running as nobody can write a volume: a fresh one, or else one created with uid and gid set to its user (a warning naming them).',
    protocolRef: REF,
    severity: 'recommended',
    gradeReason:
      "a default client lets the task write through cap_dac_override; an operator who hardens the client takes that away (Nomad #26190), and then the volume's owner and mode decide, which the volume spec's parameters must be able to set",
    asks: `${ASKS} that does not allow dac_override; when the task cannot write, 1 more volume asked to be owned by the task's user`,
    needs: ['tasks.unprivileged-write'],
    async run(ctx: CheckContext) {
      const client = await TaskClient.start(ctx, { hardened: true });
      const volume = await client.createVolume();
      const run = await tryWrite(client, volume);
      const { uid, gid } = run.identity;
      if (run.wrote) {
        ctx.note(`on a hardened client a task as nobody (uid ${uid}) wrote into ${await describeRoot(volume)}`);
        return;
      }
      const found =
        `On a hardened client (the exec driver's allow_caps without dac_override, as operators harden it: Nomad #26190), ` +
        `a task as nobody (uid ${uid}, gid ${gid}) cannot write into a fresh volume: ${writeFailure(run)}. ` +
        `The volume's root is ${await describeRoot(volume)}: without cap_dac_override only its owner and mode decide.`;
      const { fixed, advice } = await whatFixesIt(client, uid, gid);
      if (!fixed) ctx.fail(`${found} ${advice}`);
      ctx.warn(`${found} ${advice}`);
    },
  },
  {
    id: 'tasks.read-only-mount',
    area: 'tasks',
    title:
      'A task whose volume_mount is read_only cannot write into the volume: the kernel refuses (Read-only file system).',
    protocolRef: REF,
    severity: 'required',
    gradeReason:
      'a job that mounts a volume read-only counts on it: a task that could write there would change or destroy the data other tasks read',
    asks: ASKS,
    needs: ['tasks.unprivileged-write'],
    async run(ctx: CheckContext) {
      const client = await TaskClient.start(ctx);
      const volume = await client.createVolume();
      const probe = `${TASK_MOUNT}/${WRITTEN}`;
      const { alloc } = await client.runTask(volume, `touch ${probe} 2>&1; echo "exit=$?"`, { readOnly: true });
      const stdout = await client.output(alloc);
      const written = existsSync(join(volume.HostPath, WRITTEN));
      if (written || !/exit=[1-9]/.test(stdout))
        ctx.fail(
          `a task whose mount is read_only wrote ${probe} into the volume (${describeTask(stdout, await client.errors(alloc), alloc)})`,
        );
      if (!stdout.includes('Read-only file system'))
        ctx.fail(
          `the task's write failed, but not as a read-only mount refuses it: ${describeTask(stdout, await client.errors(alloc), alloc)}`,
        );
      ctx.note('the read-only mount refused the task\'s write: "Read-only file system"');
    },
  },
  {
    id: 'tasks.data-survives-restart',
    area: 'tasks',
    title:
      'What a running task wrote into its volume is still there after the agent restarts (every volume created again while the task keeps running).',
    protocolRef: 'PROTOCOL.md § What the agent does with volumes (restore on restart)',
    severity: 'required',
    gradeReason:
      "a restarted agent runs create again for every volume while their jobs keep running: a create that makes the volume afresh loses the job's data",
    asks: `${ASKS}, the agent restarted under it`,
    needs: ['tasks.unprivileged-write', 'create.idempotent', 'create.restore-in-use'],
    async run(ctx: CheckContext) {
      const client = await TaskClient.start(ctx);
      const token = randomUUID();
      const { volume, alloc } = await keeperWrote(client, token);
      const report = await client.agent.restart();
      const failed = report.failed.find((f) => f.volume.ID === volume.ID);
      if (failed) ctx.fail(`the agent's restart could not restore the volume: ${failed.error.message}`);
      const after = await client.agent.volume(volume.ID);
      const status = (await client.agent.jobs().alloc(alloc.ID))?.ClientStatus;
      if (status !== 'running')
        ctx.fail(`the task stopped across the agent's restart (allocation ${status ?? 'gone'})`);
      const kept = await readFile(join(after.HostPath, WRITTEN), 'utf8').catch(() => undefined);
      if (kept?.trim() !== token)
        ctx.fail(
          `after the agent's restart the file the running task wrote is ${kept === undefined ? 'gone' : `changed (${JSON.stringify(kept.trim())})`} from the volume's path ${after.HostPath}: the restore's create made the volume afresh`,
        );
      ctx.note('the task kept running across the restart, and its file was still in the volume');
    },
  },
  {
    id: 'tasks.data-survives-reboot',
    area: 'tasks',
    title:
      "What a task wrote into its volume is there for the task when it runs again after a host reboot (the volume's mounts gone, then restored).",
    protocolRef: 'PROTOCOL.md § What the agent does with volumes (restore on restart)',
    severity: 'required',
    gradeReason:
      'after a reboot the client restores every volume with create, then runs the jobs again: a restore that does not bring the data back loses it, under a job that seems to run',
    asks: `${ASKS}, the host rebooted under it (simulated)`,
    needs: ['tasks.unprivileged-write', 'create.restore'],
    async run(ctx: CheckContext) {
      const client = await TaskClient.start(ctx);
      const token = randomUUID();
      const { volume, alloc } = await keeperWrote(client, token);
      const report = await client.agent.restart({ reboot: true });
      const failed = report.failed.find((f) => f.volume.ID === volume.ID);
      if (failed) ctx.fail(`after the reboot the agent could not restore the volume: ${failed.error.message}`);
      const text = await client.waitForLine(
        alloc,
        (t) => t.split('\n').filter((l) => l !== '').length >= 2,
        'run again after the reboot',
      );
      const again = text.split('\n').filter((l) => l !== '')[1]!;
      if (again !== `found ${token}`)
        ctx.fail(
          `after the reboot the task ran again and ${again === 'wrote' ? `found no ${WRITTEN} in its volume: what it wrote before the reboot is gone` : `said ${JSON.stringify(again)} instead of finding its file`} (the volume's path: ${(await client.agent.volume(volume.ID)).HostPath})`,
        );
      ctx.note('after the reboot the task ran again and found the file it wrote before');
    },
  },
  {
    id: 'tasks.delete-in-use',
    area: 'tasks',
    title:
      'A volume a running task holds is not deleted (Nomad refuses: in use by allocations); once the task stops, the delete succeeds.',
    protocolRef: 'PROTOCOL.md § delete',
    severity: 'required',
    gradeReason:
      "a volume whose delete fails after its job stopped (the task's files in it, owned by nobody) stays on the node, and the user cannot remove it through Nomad",
    asks: ASKS,
    needs: ['tasks.unprivileged-write'],
    async run(ctx: CheckContext) {
      const client = await TaskClient.start(ctx);
      const volume = await client.createVolume();
      const script = `mkdir -p ${TASK_MOUNT}/dir && echo task > ${TASK_MOUNT}/dir/${WRITTEN} && chmod 0500 ${TASK_MOUNT}/dir && echo wrote; exec sleep ${TASK_LIFETIME_S}`;
      const { alloc, jobId } = await client.runTask(volume, script, { type: 'service' });
      await client.waitForLine(alloc, (t) => t.includes('wrote'), 'write into its volume');
      const refused = await client.agent.deleteVolume(volume.ID).then(
        () => undefined,
        (err: Error) => err.message.split('\n')[0]!,
      );
      const expected = `volume ${volume.ID} in use by allocations: [${alloc.ID}]`;
      if (refused === undefined) ctx.fail('the volume was deleted while a running task held it');
      if (refused !== expected)
        ctx.fail(`the delete of a volume in use was refused with "${refused}", not "${expected}"`);
      await client.agent.jobs().stop('default', jobId);
      const deleted = await client.agent.deleteVolume(volume.ID).then(
        () => undefined,
        (err: Error) => err.message,
      );
      if (deleted !== undefined)
        ctx.fail(
          `once the task stopped, the delete of the volume it wrote into (files and a 0500 folder owned by nobody) failed: ${deleted}`,
        );
      ctx.note(`refused while in use: "${expected}"; deleted once the task stopped`);
    },
  },
];
