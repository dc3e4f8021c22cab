import { setMaxListeners } from 'node:events';
import type { PluginRunner } from '@dhv/sdk/client';
import type { AgentConfig } from '../config/agent-config.js';
import type { VolumeSpec } from '../volume-specs/volume-spec.js';
import { AgentError } from '../errors/agent-error.js';
import type { ClientState, ClientCreateRequest } from './state/client-state.js';
import { staticHostVolumes } from './host-volumes.js';
import type { NodeFacts } from './state/node-facts.js';
import { AgentStore } from './state/store.js';
import { unstartedNodeFacts, type NodeStatus } from './node-status.js';
import type { ClientDeleteRequest, ClientRegisterRequest } from './client/plugin-requests.js';
import { builtinFirst, fingerprintPlugins, type Fingerprint } from './plugins.js';
import { OrphanCollector } from './orphans.js';
import { simulateReboot } from './reboot.js';
import { VolumeManager, type ClientCreateResponse, type ServerVolume } from './client/host-volume-manager.js';
import type { AgentLogLine, ClientStateStore } from './client/volume-manager-context.js';
import type { HostVolume } from './volume-view.js';
import { Jobs } from './allocations/jobs.js';
import type { Allocation } from './allocations/alloc-status.js';
import { execTaskCaps } from './allocations/task-launch.js';
import { Namespaces } from './namespaces.js';
import { startHeld, type StartOptions, type StartReport } from './agent-start.js';
import type { AgentParts } from './agent-parts.js';
import { publish } from './node-report.js';
import { createVolume, registerVolume, type Upserted } from './volume-upsert.js';
import { deleteVolume, refuseDeleteInUse } from './volume-delete.js';
import { readNodeStatus, readVolume, readVolumes, unreadableVolume } from './volume-reads.js';

export interface AgentOptions {
  /** Where warnings go as they happen (a CLI prints them to stderr). */
  onWarning?: (message: string) => void;
  /** How plugins other than the built-in mkdir are run (default: as processes); the built-in always runs in process. */
  runner?: PluginRunner;
  /** Wraps the client state the host volume manager uses (tests inject failures). */
  clientState?: (state: ClientState) => ClientStateStore;
  /** The deadline every restore shares, counted from its start. Default: Nomad's 50 s. */
  restoreDeadlineMs?: number;
}

/** Every plugin run in flight listens on the shutdown signal: thousands of them are expected, not a leak. */
function newShutdownController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

export type { NodeStatus, NodeView } from './node-status.js';
export type { Allocation, HostVolume };
export { EXEC_DEFAULT_CAPS } from './allocations/task-launch.js';
export type { StartReport, StartOptions } from './agent-start.js';
export type { Upserted } from './volume-upsert.js';

/**
 * The simulated Nomad node, servers and client in one: each call runs the servers' rules
 * (servers/: placement, update rules, volume states), then the client's host volume
 * manager (client/), then records what the node reports (node facts, in the store).
 * The class holds what the agent is (its lock and store, its runner, the shutdown of runs
 * in flight); its volume operations live in modules of their own (volume-upsert.ts,
 * volume-delete.ts, volume-reads.ts, node-report.ts), each handed the agent's parts.
 * Everything durable lives in the data dir (state/), so every `dhv` command (a separate
 * process) sees the same node; `start()` is what a real agent does when it starts.
 */
export class Agent {
  private controller = newShutdownController();
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly state: ClientState;
  private readonly records: ClientStateStore;
  private readonly runner: PluginRunner;
  private closed = false;
  /** Every warn and error line the host volume manager logged since this object was opened. */
  readonly logs: AgentLogLine[] = [];

  private constructor(
    readonly config: AgentConfig,
    readonly nodeId: string,
    private readonly store: AgentStore,
    private readonly options: AgentOptions,
  ) {
    this.state = store.records;
    this.records = options.clientState ? options.clientState(this.state) : this.state;
    this.runner = builtinFirst(options.runner);
  }

  /** Opens the agent's data dir (creating it and the node ID on first use) without starting it. */
  static async open(config: AgentConfig, options: AgentOptions = {}): Promise<Agent> {
    const store = await AgentStore.open(config.dataDir);
    return new Agent(config, await store.nodeId(), store, options);
  }

  /**
   * Starts as a real agent does: fingerprint the plugins, forget every name claim, restore
   * every volume from client state at once under one deadline, and report the static
   * volumes plus what restore returned (nothing dynamic if restore failed as a whole).
   * The whole start holds the agent exclusive: no create, delete or other restart of any
   * `dhv` process runs beside it.
   */
  async start(options: StartOptions = {}): Promise<StartReport> {
    this.closed = false;
    this.controller = newShutdownController();
    return this.track(() =>
      this.store.lock.exclusive(
        { doing: 'starting the agent (restoring every volume)' },
        () => this.startHeld(options),
        this.controller.signal,
      ),
    );
  }

  /** Shuts down (aborting plugin runs in flight), optionally simulates a host reboot, and starts again, all as one hold of the agent. */
  async restart(options: { reboot?: boolean } & StartOptions = {}): Promise<StartReport> {
    await this.shutdown();
    this.closed = false;
    this.controller = newShutdownController();
    const signal = this.controller.signal;
    return this.track(() =>
      this.store.lock.exclusive(
        {
          doing: options.reboot
            ? 'rebooting and restarting the agent'
            : 'restarting the agent (restoring every volume)',
        },
        async () => {
          // A reboot kills every task before it takes the volumes' mounts, and the client runs them again after the restore.
          const killed = options.reboot ? await this.jobs().killForReboot() : [];
          const reboot = options.reboot ? await simulateReboot(this.config, this.store, signal) : undefined;
          const report = await this.startHeld(options);
          if (killed.length > 0) await this.jobs().restartAfterReboot(killed);
          await this.retryBlockedJobs();
          return reboot ? { ...report, reboot } : report;
        },
        signal,
      ),
    );
  }

  /** The start itself, with the agent held exclusive (agent-start.ts). */
  private startHeld(options: StartOptions): Promise<StartReport> {
    return startHeld(
      {
        config: this.config,
        nodeId: this.nodeId,
        store: this.store,
        runner: this.runner,
        signal: this.controller.signal,
        restore: (deadlineMs) => this.manager().restore(deadlineMs),
        restoreDeadlineMs: this.options.restoreDeadlineMs,
        warn: (message) => this.warn(message),
      },
      options,
    );
  }

  /**
   * Stops the agent: every plugin run still in flight is killed (its process group),
   * which a real Nomad agent cannot do yet. Operations in flight fail with PLUGIN_ABORTED.
   */
  async shutdown(): Promise<void> {
    this.closed = true;
    this.controller.abort();
    await Promise.allSettled([...this.inflight]);
  }

  /** Discovers and fingerprints plugins again (a real agent's reload), and keeps the result as the node's attributes. */
  async fingerprint(): Promise<Fingerprint> {
    return this.track(async () => {
      const fingerprint = await fingerprintPlugins(this.runner, this.config.pluginDir, this.controller.signal);
      for (const w of fingerprint.warnings ?? []) this.warn(w);
      // Kept as the node's attributes; best effort, so a read-only command still works on a full disk.
      const saved = await this.store
        .updateNodeFacts((previous) => ({
          ...(previous ?? {
            restoreWarnings: [],
            hostVolumes: staticHostVolumes(this.config.hostVolumes),
            volumeStates: new Map(),
          }),
          fingerprint,
          fingerprintedAt: new Date().toISOString(),
        }))
        .catch(() => undefined);
      return saved?.fingerprint ?? fingerprint;
    });
  }

  /**
   * The client's side of a create, exactly as the servers call it (what the
   * agent-scenario vectors replay). `createVolume` is the whole `volume create`.
   */
  get client() {
    const serialised = <T>(id: string, doing: string, fn: () => Promise<T>) =>
      this.track(() => this.store.lock.volume(id, { doing }, fn, this.controller.signal));
    return {
      create: (req: ClientCreateRequest, server?: ServerVolume): Promise<ClientCreateResponse> =>
        serialised(req.ID, `creating volume "${req.Name}" (${req.ID})`, () => this.manager().create(req, server)),
      register: (req: ClientRegisterRequest, server?: ServerVolume): Promise<void> =>
        serialised(req.ID, `registering volume "${req.Name}" (${req.ID})`, () => this.manager().register(req, server)),
      delete: (req: ClientDeleteRequest) =>
        serialised(req.ID, `deleting volume "${req.Name}" (${req.ID})`, () => this.manager().delete(req)),
      /** The volume-name locks, `{name: volume ID}`. */
      locks: () => this.store.claims.all(),
    };
  }

  /** `volume create` end to end (volume-upsert.ts); jobs waiting for a volume are evaluated again after it. */
  async createVolume(spec: VolumeSpec): Promise<Upserted> {
    return this.track(async () => {
      const created = await createVolume(this.parts(), spec);
      await this.retryBlockedJobs();
      return created;
    });
  }

  /** `volume register` (volume-upsert.ts): the path must exist; no plugin runs. */
  async registerVolume(spec: VolumeSpec): Promise<Upserted> {
    return this.track(async () => {
      const registered = await registerVolume(this.parts(), spec);
      await this.retryBlockedJobs();
      return registered;
    });
  }

  /** Deletes the volume of ID `id` (volume-delete.ts): a whole ID, never a prefix or a name. */
  async deleteVolume(id: string, namespace?: string): Promise<HostVolume> {
    return this.track(() => deleteVolume(this.parts(), id, namespace));
  }

  /** gc: the volumes on disk that client state does not know, found in this agent's store, removed with its runner. */
  orphans(): OrphanCollector {
    return new OrphanCollector(this.config, this.store, this.runner);
  }

  /**
   * gc without opening the agent: the orphans under the volumes dir, found and removed by
   * the agent's rules with its runner, making no data dir and no node ID (a data dir that
   * is not there claimed no volume, so gc only lists what it finds).
   */
  static orphansOf(config: AgentConfig, options: AgentOptions = {}): OrphanCollector {
    // '': gc never asks the agent for its node ID; it reads it from the store only to delete an orphan its claims name.
    return new Agent(config, '', new AgentStore(config.dataDir), options).orphans();
  }

  /** The namespaces volumes and jobs live in (`default` always). */
  namespaces(): Namespaces {
    return new Namespaces(this.store, this.jobs());
  }

  /** Jobs and their allocations on this node (allocations/). */
  jobs(): Jobs {
    return new Jobs({
      store: this.store,
      nodeId: this.nodeId,
      // Read, never started here: placement reads them under locks that a start would wait on.
      hostVolumes: async () => ((await this.store.nodeFacts()) ?? unstartedNodeFacts(this.config)).hostVolumes,
      ensureStarted: async () => void (await this.facts()),
      volumes: () => this.volumes(),
      execCaps: execTaskCaps(this.config.execAllowCaps),
    });
  }

  /** The node's volumes changed: jobs that could not be placed are evaluated again; a failure there is a warning, not the volume's. */
  private async retryBlockedJobs(): Promise<void> {
    await this.jobs()
      .retryBlocked()
      .catch((err: Error) => this.warn(`retrying the jobs waiting for a volume failed: ${err.message}`));
  }

  /** Nomad's usage claims of a volume: the allocations on its node, not client-terminal, whose group asks for its name. */
  volumeUsers(volume: { Name: string; NodeID: string }): Promise<Allocation[]> {
    return this.jobs().volumeUsers(volume);
  }

  /** The volume of ID `id` (a whole ID, as Nomad's API reads it). */
  volume(id: string): Promise<HostVolume> {
    return readVolume(this.parts(), id);
  }

  /** Every volume whose record loads; each one that does not is a warning naming its file and the fix. */
  volumes(): Promise<HostVolume[]> {
    return readVolumes(this.parts());
  }

  /** The error of the one volume whose ID starts with `ref` and whose record does not load, if there is one. */
  unreadableVolume(ref: string): Promise<AgentError | undefined> {
    return unreadableVolume(this.parts(), ref);
  }

  /** The node as the servers see it: attributes from the last fingerprint, `HostVolumes` as the node last reported them. */
  status(): Promise<NodeStatus> {
    return readNodeStatus(this.parts());
  }

  /** What the node last reported; a data dir that never started gets a start now, as an agent's first start. */
  private async facts(): Promise<NodeFacts> {
    const facts = await this.store.nodeFacts();
    if (facts) return facts;
    await this.start();
    return (await this.store.nodeFacts()) ?? unstartedNodeFacts(this.config);
  }

  /** What the Agent's operations work with, for this call (agent-parts.ts). */
  private parts(): AgentParts {
    return {
      config: this.config,
      nodeId: this.nodeId,
      store: this.store,
      state: this.state,
      runner: this.runner,
      signal: this.controller.signal,
      manager: () => this.manager(),
      facts: () => this.facts(),
      namespaces: () => this.namespaces(),
      volumeUsers: (volume) => this.volumeUsers(volume),
      warn: (message) => this.warn(message),
    };
  }

  private manager(): VolumeManager {
    return new VolumeManager({
      config: this.config,
      runner: this.runner,
      state: this.records,
      names: this.store.claims,
      lock: this.store.lock,
      publish: (updates) => publish(this.parts(), updates),
      signal: this.controller.signal,
      health: this.store.health,
      disks: this.store.disks,
      mounts: this.store.mounts,
      beforeDelete: (req) => refuseDeleteInUse(this, req),
      log: (line) => {
        this.logs.push(line);
        if (line.level === 'warn' && !line.message.startsWith('error deleting volume')) this.warn(line.message);
      },
    });
  }

  private warn(message: string): void {
    this.options.onWarning?.(message);
  }

  private async track<T>(fn: () => Promise<T>): Promise<T> {
    if (this.closed)
      throw new AgentError(
        'AGENT_SHUT_DOWN',
        'the agent has shut down; start it again (agent.start()) before using it',
      );
    const run = fn();
    this.inflight.add(run);
    try {
      return await run;
    } finally {
      this.inflight.delete(run);
    }
  }
}
