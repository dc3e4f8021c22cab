import { setMaxListeners } from 'node:events';
import { randomUUID } from 'node:crypto';
import type { AgentConfig } from '../config/agent-config.js';
import type { VolumeSpec } from '../volume-specs/volume-spec.js';
import type { ClientState, ClientCreateRequest, VolumeRecord } from './state/client-state.js';
import { AgentError } from '../errors/agent-error.js';
import {
  applyHostVolumeUpdates,
  staticHostVolumes,
  type HostVolumeConfig,
  type HostVolumeUpdate,
} from './host-volumes.js';
import type { NodeFacts, VolumeState } from './state/node-facts.js';
import { AgentStore } from './state/store.js';
import { describeNode } from './node-description.js';
import { nodeStatus, unstartedNodeFacts, type NodeStatus } from './node-status.js';
import { placementProblem } from './servers/placement.js';
import { existingForUpdate } from './servers/update-rules.js';
import { stateAfterUpsert, statesAfterNodeUpdate } from './servers/volume-states.js';
import {
  asServersReturn,
  clientCreateRequest,
  clientRegisterRequest,
  registeredServerVolume,
  serverVolume,
} from './servers/host-volume-endpoint.js';
import { deleteRequestFor, type ClientDeleteRequest, type ClientRegisterRequest } from './client/plugin-requests.js';
import { builtinFirst, fingerprintPlugins, type Fingerprint } from './plugins.js';
import { OrphanCollector } from './orphans.js';
import type { PluginRunner } from '@dhv/sdk/client';
import { simulateReboot } from './reboot.js';
import { VolumeManager, type ClientCreateResponse, type ServerVolume } from './client/host-volume-manager.js';
import type { AgentLogLine, ClientStateStore } from './client/volume-manager-context.js';
import { toHostVolume, type HostVolume } from './volume-view.js';
import { Jobs } from './allocations/jobs.js';
import type { Allocation } from './allocations/alloc-status.js';
import { execTaskCaps } from './allocations/task-launch.js';
import { Namespaces } from './namespaces.js';
import { multierrorText } from '../go/multierror.js';
import { serverKey, startHeld, type StartOptions, type StartReport } from './agent-start.js';

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

/**
 * The simulated Nomad node, servers and client in one: each call runs the servers' rules
 * (servers/: placement, update rules, volume states), then the client's host volume
 * manager (client/), then records what the node reports (node facts, in the store).
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

  /**
   * `volume create` end to end: the servers' checks (update rules, placement on this
   * node: the plugin must be fingerprinted and the constraints met), then the client's
   * create, then the state the servers compute. All of it holds the volume's lock (Nomad's
   * serializeCall), and the volume is read under it: an update that comes after a delete
   * finds no volume, and one that comes before it finishes before the delete begins.
   */
  async createVolume(spec: VolumeSpec): Promise<{ volume: HostVolume; created: boolean }> {
    return this.track(async () => {
      const facts = await this.facts();
      const id = spec.id || randomUUID();
      const created = await this.store.lock.volume(
        id,
        { doing: `creating volume "${spec.name}" (${id})`, name: spec.name },
        async () => {
          await this.namespaces().requireForVolume(spec.namespace);
          const existing = existingForUpdate(spec, spec.id ? await this.state.get(spec.id) : undefined);
          if (existing) await this.refuseUpdateInUse(existing);
          const problem = placementProblem(spec, {
            nodeId: this.nodeId,
            nodePool: this.config.nodePool,
            description: describeNode(this.config),
            facts: await this.withoutDeleted(facts, [spec.name]),
            pluginDir: this.config.pluginDir,
            pluginInDir: await this.runner.lookup(this.config.pluginDir, spec.pluginId).then(
              () => true,
              () => false,
            ),
            updating: existing !== undefined,
          });
          if (problem) throw problem;
          await this.manager()
            .create(clientCreateRequest(spec, id, this.nodeId), serverVolume(spec, this.config.nodePool, existing))
            .catch((err: unknown) => {
              throw asServersReturn('HostVolume.Create', err);
            });
          return { volume: await this.afterUpsert(id), created: !existing };
        },
        this.controller.signal,
      );
      await this.retryBlockedJobs();
      return created;
    });
  }

  /** `volume register`: the servers' update rules, then the client's register (the path must exist; no plugin runs). */
  async registerVolume(spec: VolumeSpec): Promise<{ volume: HostVolume; created: boolean }> {
    return this.track(async () => {
      await this.facts();
      const id = spec.id || randomUUID();
      const registered = await this.store.lock.volume(
        id,
        { doing: `registering volume "${spec.name}" (${id})`, name: spec.name },
        async () => {
          await this.namespaces().requireForVolume(spec.namespace);
          const existing = existingForUpdate(spec, spec.id ? await this.state.get(spec.id) : undefined);
          if (existing) await this.refuseUpdateInUse(existing);
          await this.manager().register(
            clientRegisterRequest(spec, id, this.nodeId),
            registeredServerVolume(spec, this.config.nodePool, existing),
          );
          return { volume: await this.afterUpsert(id), created: !existing };
        },
        this.controller.signal,
      );
      await this.retryBlockedJobs();
      return registered;
    });
  }

  /**
   * Deletes the volume of ID `id`, with the request the servers would send. Like Nomad's API
   * it takes a whole ID, never a prefix or a name: which volume a user named is the CLI's
   * lookup (`commands/volume/find-volume.ts`), done once, before this.
   */
  async deleteVolume(id: string, namespace?: string): Promise<HostVolume> {
    return this.track(async () => {
      const found = await this.state.get(id);
      const elsewhere =
        found !== undefined &&
        namespace !== undefined &&
        namespace !== '*' &&
        (found.Volume.Namespace ?? found.CreateReq.Namespace) !== namespace;
      if (!found || elsewhere) {
        throw new AgentError(
          'VOLUME_NOT_FOUND',
          `no such volume: ${id}\nRun dhv volume status -namespace '*' to list the volumes.`,
          { ref: id },
        );
      }
      return this.store.lock.volume(
        found.ID,
        { doing: `deleting volume "${found.CreateReq.Name}" (${found.ID})`, name: found.CreateReq.Name },
        async () => {
          // Read again under the volume's lock: a delete that waited for another finds it gone.
          const record = await this.state.get(found.ID);
          if (!record) {
            throw new AgentError(
              'VOLUME_NOT_FOUND',
              `no such volume: ${found.ID}\nIt was deleted while this command waited for it; run dhv volume status to list the volumes`,
              { volumeId: found.ID },
            );
          }
          const view = toHostVolume(record, await this.stateOf(record.ID));
          await this.manager()
            .delete(deleteRequestFor(record))
            .catch((err: unknown) => {
              throw asServersReturn('HostVolume.Delete', err);
            });
          await this.store.updateNodeFacts((f) => {
            const facts = f ?? this.emptyFacts();
            const volumeStates = new Map(facts.volumeStates);
            volumeStates.delete(record.ID);
            return { ...facts, volumeStates };
          });
          return view;
        },
        this.controller.signal,
      );
    });
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
      hostVolumes: async () => ((await this.store.nodeFacts()) ?? this.emptyFacts()).hostVolumes,
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

  /** The servers refuse to delete a volume that allocations use, `-force` or not (Nomad's HostVolume.Delete). */
  private async refuseDeleteInUse(req: ClientDeleteRequest): Promise<void> {
    const users = await this.volumeUsers({ Name: req.Name, NodeID: req.NodeID });
    if (users.length > 0)
      throw new AgentError(
        'VOLUME_IN_USE',
        `volume ${req.ID} in use by allocations: [${users.map((a) => a.ID).join(' ')}]\nStop the jobs that use it (dhv job stop <job>), then delete it again.`,
        { volumeId: req.ID, allocations: users.map((a) => a.ID) },
      );
  }

  /** Nomad's ValidateUpdate: no change at all while allocations use the volume. */
  private async refuseUpdateInUse(record: VolumeRecord): Promise<void> {
    const users = await this.volumeUsers({ Name: record.CreateReq.Name, NodeID: record.CreateReq.NodeID });
    if (users.length > 0)
      throw new AgentError(
        'VOLUME_IN_USE',
        `validating volume "${record.ID}" update failed: ${multierrorText([`cannot update a volume in use: claimed by allocs (${users.map((a) => a.ID).join(', ')})`])}`,
        { volumeId: record.ID, allocations: users.map((a) => a.ID) },
      );
  }

  /** The volume of ID `id` (a whole ID, as Nomad's API reads it). */
  async volume(id: string): Promise<HostVolume> {
    const record = await this.state.get(id);
    if (!record)
      throw new AgentError('VOLUME_NOT_FOUND', `no such volume: ${id}\nRun dhv volume status to list the volumes.`, {
        ref: id,
      });
    return toHostVolume(
      record,
      await this.stateOf(record.ID),
      (await this.store.health.judge([record])).get(record.ID),
    );
  }

  /** Every volume whose record loads; each one that does not is a warning naming its file and the fix. */
  async volumes(): Promise<HostVolume[]> {
    const [{ records, damaged }, facts] = await Promise.all([this.state.scan(), this.store.nodeFacts()]);
    for (const d of damaged) this.warn(d.error.message);
    const failures = await this.store.health.judge(records);
    return records.map((r) => toHostVolume(r, facts?.volumeStates.get(r.ID) ?? 'pending', failures.get(r.ID)));
  }

  /** The error of the one volume whose ID starts with `ref` and whose record does not load, if there is one. */
  async unreadableVolume(ref: string): Promise<AgentError | undefined> {
    if (ref === '') return undefined;
    const matches = (await this.state.scan()).damaged.filter((d) => d.id.startsWith(ref));
    return matches.length === 1 ? matches[0]!.error : undefined;
  }

  /** The node as the servers see it: attributes from the last fingerprint, `HostVolumes` as the node last reported them. */
  async status(): Promise<NodeStatus> {
    const facts = await this.facts();
    const volumes = await this.volumes();
    const recorded = new Set(volumes.map((v) => v.ID));
    return nodeStatus(
      this.config,
      this.nodeId,
      this.published(facts, (id) => recorded.has(id)),
      volumes,
    );
  }

  /**
   * The node's facts without a dynamic volume whose record is gone. Every change of a
   * volume commits with one rename or unlink of its record; a `dhv` killed between a
   * delete's commit and its update of the node left the volume on the node, and what the
   * node reports is read against client state, so the next command sees it deleted.
   * `names` limits the look to the entries a caller reads.
   */
  private async withoutDeleted(facts: NodeFacts, names: readonly string[]): Promise<NodeFacts> {
    const gone = new Set<string>();
    for (const name of names) {
      const id = facts.hostVolumes.get(name)?.ID;
      if (id && !(await this.state.has(id))) gone.add(id);
    }
    return this.published(facts, (id) => !gone.has(id));
  }

  private published(facts: NodeFacts, recorded: (id: string) => boolean): NodeFacts {
    let hostVolumes: Map<string, HostVolumeConfig> | undefined;
    for (const [name, volume] of facts.hostVolumes) {
      if (volume.ID === '' || recorded(volume.ID)) continue;
      (hostVolumes ??= new Map(facts.hostVolumes)).delete(name);
    }
    return hostVolumes ? { ...facts, hostVolumes } : facts;
  }

  /** What the node last reported; a data dir that never started gets a start now, as an agent's first start. */
  private async facts(): Promise<NodeFacts> {
    const facts = await this.store.nodeFacts();
    if (facts) return facts;
    await this.start();
    return (await this.store.nodeFacts()) ?? this.emptyFacts();
  }

  private emptyFacts(): NodeFacts {
    return unstartedNodeFacts(this.config);
  }

  /** The servers write the volume after the client answered: `pending`, or `ready` when the node already reports its name. */
  private async afterUpsert(id: string): Promise<HostVolume> {
    const record = (await this.state.get(id))!;
    // The node's update during the client's create usually wrote this very state: no second write.
    const now = await this.store.nodeFacts();
    const known = now?.volumeStates.get(id);
    if (now && known === stateAfterUpsert(record.CreateReq.Name, now.hostVolumes)) return toHostVolume(record, known);
    const facts = await this.store.updateNodeFacts((f) => {
      const facts = f ?? this.emptyFacts();
      return {
        ...facts,
        volumeStates: new Map(facts.volumeStates).set(id, stateAfterUpsert(record.CreateReq.Name, facts.hostVolumes)),
      };
    });
    return toHostVolume(record, facts.volumeStates.get(id) ?? 'pending');
  }

  private async stateOf(id: string): Promise<VolumeState> {
    return (await this.store.nodeFacts())?.volumeStates.get(id) ?? 'pending';
  }

  /** The node tells the servers about changed volumes; they recompute every volume's state on this node. */
  private async publish(updates: HostVolumeUpdate[]): Promise<void> {
    const records = await this.state.list();
    let warnings: string[] = [];
    await this.store.updateNodeFacts((f) => {
      const facts = f ?? this.emptyFacts();
      const applied = applyHostVolumeUpdates(facts.hostVolumes, updates);
      warnings = applied.warnings;
      return {
        ...facts,
        hostVolumes: applied.hostVolumes,
        volumeStates: statesAfterNodeUpdate(facts.volumeStates, records.map(serverKey), applied.hostVolumes),
      };
    });
    for (const w of warnings) this.warn(w);
  }

  private manager(): VolumeManager {
    return new VolumeManager({
      config: this.config,
      runner: this.runner,
      state: this.records,
      names: this.store.claims,
      lock: this.store.lock,
      publish: (updates) => this.publish(updates),
      signal: this.controller.signal,
      health: this.store.health,
      disks: this.store.disks,
      mounts: this.store.mounts,
      beforeDelete: (req) => this.refuseDeleteInUse(req),
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
