import { access, chmod, mkdir, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BUILTIN_MKDIR_ID } from '@dhv/sdk/client';
import { shellQuote } from '@dhv/sdk/host';
import { Agent, EXEC_DEFAULT_CAPS, type Allocation, type HostVolume } from '../agent/agent.js';
import { DEFAULT_KILL_SIGNAL, DEFAULT_KILL_TIMEOUT_NS, defaultVolumeRequest, type Job } from '../jobs/job-spec.js';
import type { CheckContext } from './types.js';
import { OutsideSandboxError, insideSandbox } from './sandbox-writes.js';

/** Where a task sees its volume. */
export const TASK_MOUNT = '/data';
/** The task and group of every job a check runs. */
const GROUP = 'g';
const TASK = 't';
/** How long a task gets to say what it did, or to reach the state a check waits for. */
const TASK_DEADLINE_MS = 60_000;

/** A client hardened as operators harden it: the `exec` driver allows every default capability but `dac_override`. */
export const HARDENED_ALLOW_CAPS: readonly string[] = EXEC_DEFAULT_CAPS.filter((c) => c !== 'dac_override');

/** The programs dhv's `exec` driver starts a task with (task-launch.ts), and the package that has them. */
const TASK_TOOLS = ['/usr/bin/unshare', '/usr/bin/setpriv'];

export interface TaskRun {
  jobId: string;
  alloc: Allocation;
}

/**
 * A simulated Nomad client of one check's own, in its sandbox: dhv's agent with the plugin
 * in its plugin dir, so the check runs jobs whose tasks really mount the plugin's volumes
 * (dhv's jobs and allocations, as `dhv job run` runs them). Everything it started is
 * stopped and deleted by the check's cleanup.
 */
export class TaskClient {
  private jobs = 0;

  private constructor(
    private readonly ctx: CheckContext,
    readonly agent: Agent,
    readonly pluginId: string,
    /** Whether the exec driver leaves `dac_override` out. */
    readonly hardened: boolean,
  ) {}

  /**
   * Starts the client, or skips the check when this host cannot run tasks with volumes:
   * mounting a volume into a task's own mount namespace needs root, unshare and setpriv.
   */
  static async start(ctx: CheckContext, { hardened = false } = {}): Promise<TaskClient> {
    if (process.getuid?.() !== 0)
      ctx.skip(
        `cannot judge without root: a task's volume is bind-mounted into the task's own mount namespace, which only root can make (dhv runs as uid ${process.getuid?.()}); run dhv check as root to run the tasks checks`,
      );
    for (const tool of TASK_TOOLS)
      await access(tool, constants.X_OK).catch(() =>
        ctx.skip(`cannot judge: ${tool} is missing, and dhv starts tasks with it (apt-get install util-linux)`),
      );
    const root = join(ctx.sandbox, 'client');
    const pluginDir = join(root, 'plugins');
    await mkdir(pluginDir, { recursive: true });
    // The plugin under its own name (the agent runs a plugin dir's files by ID), through a
    // program in its place: a link may not leave the plugin dir, and a copy may lose what lies beside the plugin.
    const own = basename(ctx.plugin);
    const pluginId = own === BUILTIN_MKDIR_ID ? 'dhv-check-plugin' : own;
    const wrapper = join(pluginDir, pluginId);
    await writeFile(wrapper, `#!/bin/sh\nexec ${shellQuote(ctx.plugin)} "$@"\n`);
    await chmod(wrapper, 0o755);
    const agent = await Agent.open({
      dataDir: join(root, 'data'),
      pluginDir,
      volumesDir: ctx.volumesDir,
      nodePool: 'default',
      hostVolumes: [],
      ...(hardened ? { execAllowCaps: [...HARDENED_ALLOW_CAPS] } : {}),
    });
    const client = new TaskClient(ctx, agent, pluginId, hardened);
    ctx.cleanup(async () => {
      // A task a failed stop left running dies as at a reboot; then the agent stops.
      await agent
        .jobs()
        .killForReboot()
        .catch(() => {});
      await agent.shutdown();
    });
    const { fingerprint } = await agent.start();
    if (!fingerprint.plugins.some((p) => p.id === pluginId)) {
      const skipped = fingerprint.skipped.find((p) => p.id === pluginId);
      ctx.skip(
        `cannot judge: the client's discovery did not publish the plugin (${skipped?.reason ?? 'not found in its plugin dir'}); the discovery checks judge its fingerprint`,
      );
    }
    return client;
  }

  /** A volume of the plugin's, as `dhv volume create` makes it (the user's parameters and capacities, plus `parameters`); deleted at cleanup. */
  async createVolume(parameters: Record<string, string> = {}): Promise<HostVolume> {
    const request = this.ctx.newVolume();
    const merged = { ...(this.ctx.settings.parameters ?? {}), ...parameters };
    const { volume } = await this.agent.createVolume({
      type: 'host',
      id: '',
      name: request.volumeName,
      namespace: 'default',
      pluginId: this.pluginId,
      nodeId: '',
      nodePool: '',
      capacityMinBytes: BigInt(request.capacityMinBytes ?? 0),
      capacityMaxBytes: BigInt(request.capacityMaxBytes ?? 0),
      capacityBytes: 0n,
      hostPath: '',
      parameters: Object.keys(merged).length > 0 ? merged : null,
      capabilities: [{ accessMode: 'single-node-writer', attachmentMode: 'file-system' }],
      constraints: [],
    });
    this.ctx.cleanup(() => this.agent.deleteVolume(volume.ID).catch(() => {}));
    // A task writes into its volume: never into one the plugin put outside the sandbox.
    try {
      insideSandbox(this.ctx.sandboxScope, volume.HostPath);
    } catch (err) {
      if (err instanceof OutsideSandboxError) this.ctx.skip(`${err.message}, so no task of this check runs on it`);
      throw err;
    }
    return volume;
  }

  /**
   * Runs a one-task job as `dhv job run` does: an `exec` task as Nomad's default user
   * (`nobody`), the volume mounted at TASK_MOUNT, running `/bin/sh -c script`. A `batch`
   * job is waited for until its allocation ends; a `service` job until the allocation runs.
   * Stopped and purged at cleanup.
   */
  async runTask(
    volume: HostVolume,
    script: string,
    { type = 'batch', readOnly = false }: { type?: 'batch' | 'service'; readOnly?: boolean } = {},
  ): Promise<TaskRun> {
    const jobId = `dhv-check-${++this.jobs}`;
    const job: Job = {
      ID: jobId,
      Name: jobId,
      Namespace: 'default',
      Type: type,
      Version: 0,
      Stop: false,
      SubmitTime: 0,
      TaskGroups: [
        {
          Name: GROUP,
          Count: 1,
          Update: null,
          Volumes: { data: { ...defaultVolumeRequest('data'), Type: 'host', Source: volume.Name } },
          Tasks: [
            {
              Name: TASK,
              Driver: 'exec',
              User: '',
              Config: { command: '/bin/sh', args: ['-c', script] },
              VolumeMounts: [
                {
                  Volume: 'data',
                  Destination: TASK_MOUNT,
                  ReadOnly: readOnly,
                  PropagationMode: 'private',
                  SELinuxLabel: '',
                },
              ],
              Resources: { CPU: 100, MemoryMB: 300 },
              KillTimeout: DEFAULT_KILL_TIMEOUT_NS,
              KillSignal: DEFAULT_KILL_SIGNAL,
            },
          ],
        },
      ],
    };
    const report = await this.agent.jobs().run(job);
    this.ctx.cleanup(() => this.agent.jobs().stop('default', jobId, { purge: true }));
    const [placed] = report.placed;
    if (!placed)
      this.ctx.fail(
        `the job using volume "${volume.Name}" was not placed: ${report.failures.map((f) => `Constraint "${f.constraint}"`).join(', ')}`,
      );
    const alloc =
      type === 'batch'
        ? await this.waitFor(placed.ID, (a) => ['complete', 'failed'].includes(a.ClientStatus), 'end')
        : placed;
    return { jobId, alloc };
  }

  /** The allocation once `done` holds of it; fails the check past the deadline. */
  async waitFor(allocId: string, done: (a: Allocation) => boolean, what: string): Promise<Allocation> {
    const deadline = Date.now() + TASK_DEADLINE_MS;
    for (;;) {
      const alloc = await this.agent.jobs().alloc(allocId);
      if (alloc && done(alloc)) return alloc;
      if (Date.now() > deadline || this.ctx.signal.aborted)
        this.ctx.fail(
          `the task did not ${what} within ${TASK_DEADLINE_MS / 1000} s (allocation ${allocId}: ${alloc?.ClientStatus ?? 'gone'}${alloc ? `; ${describeEvents(alloc)}` : ''})`,
        );
      await sleep(25);
    }
  }

  /** The task's stdout so far. */
  output(alloc: Allocation): Promise<string> {
    return this.agent.jobs().logs(alloc, TASK, 'stdout');
  }

  /** The task's stderr so far. */
  errors(alloc: Allocation): Promise<string> {
    return this.agent.jobs().logs(alloc, TASK, 'stderr');
  }

  /** The task's stdout once it holds `line`; fails the check when the task ended without it or past the deadline. */
  async waitForLine(alloc: Allocation, line: (text: string) => boolean, what: string): Promise<string> {
    const deadline = Date.now() + TASK_DEADLINE_MS;
    for (;;) {
      const text = await this.output(alloc);
      if (line(text)) return text;
      const now = await this.agent.jobs().alloc(alloc.ID);
      const ended = now !== undefined && ['complete', 'failed'].includes(now.ClientStatus);
      if (ended || Date.now() > deadline || this.ctx.signal.aborted)
        this.ctx.fail(
          `the task ${ended ? `ended (${now.ClientStatus})` : `did not ${what} within ${TASK_DEADLINE_MS / 1000} s`} before it could ${what}: ${describeTask(text, await this.errors(alloc), now)}`,
        );
      await sleep(25);
    }
  }
}

/** The task's events, as `dhv alloc status` lists them. */
export function describeEvents(alloc: Allocation): string {
  const events = Object.values(alloc.TaskStates).flatMap((s) => s.Events);
  return `its events: ${events.map((e) => `${e.Type}: ${e.DisplayMessage}`).join('; ')}`;
}

/** What a task printed, and its events when it failed. */
export function describeTask(stdout: string, stderr: string, alloc: Allocation | undefined): string {
  const parts = [];
  if (stdout.trim() !== '') parts.push(`stdout ${JSON.stringify(stdout.trim())}`);
  if (stderr.trim() !== '') parts.push(`stderr ${JSON.stringify(stderr.trim())}`);
  if (alloc && alloc.ClientStatus === 'failed') parts.push(describeEvents(alloc));
  return parts.length > 0 ? parts.join('; ') : 'it printed nothing';
}
