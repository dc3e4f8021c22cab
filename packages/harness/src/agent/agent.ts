import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { mkdir, unlink } from 'node:fs/promises';
import type { AgentConfig } from '../config/agent-config.js';
import type { VolumeSpec } from '../spec/volume-spec.js';
import { ClientState, type VolumeRecord } from './client-state.js';
import { AgentError } from './errors.js';
import { buildHostVolumes, type HostVolumeConfig } from './host-volumes.js';
import { NameClaims } from './name-claims.js';
import { loadNodeFacts, saveNodeFacts, type NodeFacts } from './node-facts.js';
import { loadNodeId } from './node-identity.js';
import { fingerprintPlugins, type Fingerprint } from './plugins.js';
import { simulateReboot, type RebootReport } from './reboot.js';
import { restoreVolumes } from './restore.js';
import { VolumeHealth, restorableWithVolumesDir, type VolumeFailure } from './volume-health.js';
import { VolumeManager } from './volume-manager.js';
import { toHostVolume, type HostVolume } from './volume-view.js';

export interface AgentOptions {
  /** How many plugin processes a restore runs at once (default: twice the cores). */
  restoreConcurrency?: number;
  /** Where warnings go as they happen (a CLI prints them to stderr). */
  onWarning?: (message: string) => void;
}

/** Every plugin run in flight listens on the shutdown signal: thousands of them are expected, not a leak. */
function newShutdownController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

/** The node as `nomad node status -self -json` shows it, cut to what host volumes touch. */
export interface NodeView {
  ID: string;
  Name: string;
  Datacenter: string;
  NodePool: string;
  Status: 'ready';
  Attributes: Record<string, string>;
  HostVolumes: Record<string, HostVolumeConfig>;
}

export interface NodeStatus {
  node: NodeView;
  /** Plugins the last fingerprint skipped, with the reason. */
  skippedPlugins: Fingerprint['skipped'];
  volumes: HostVolume[];
  warnings: string[];
}

export interface StartReport {
  nodeId: string;
  fingerprint: Fingerprint;
  restored: HostVolume[];
  failed: Array<{ volume: HostVolume; error: { code: string; message: string } }>;
  warnings: string[];
  reboot?: RebootReport;
}

/**
 * The simulated Nomad client agent: its host volume manager, client state and node
 * fingerprint. Client state on disk is the truth, so every `dhv` command (a separate
 * process) sees the same node; `start()` is what a real agent does when it starts.
 */
export class Agent {
  private controller = newShutdownController();
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly state: ClientState;
  private readonly names: NameClaims;
  private readonly health: VolumeHealth;
  private closed = false;

  private constructor(
    readonly config: AgentConfig,
    readonly nodeId: string,
    private readonly options: AgentOptions,
  ) {
    this.state = new ClientState(config.dataDir);
    this.names = new NameClaims(config.dataDir);
    this.health = new VolumeHealth(config.dataDir);
  }

  /** Opens the agent's data dir (creating it and the node ID on first use) without starting it. */
  static async open(config: AgentConfig, options: AgentOptions = {}): Promise<Agent> {
    await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
    return new Agent(config, await loadNodeId(config.dataDir), options);
  }

  /**
   * Starts as a real agent does: fingerprint the plugins, load client state (a record
   * that does not load stops the start), restore every volume with bounded concurrency,
   * and rebuild the node's attributes and `HostVolumes`.
   */
  async start(): Promise<StartReport> {
    this.closed = false;
    this.controller = newShutdownController();
    return this.track(async () => {
      for (const file of await this.state.staleTempFiles()) await unlink(file).catch(() => {});
      await this.names.sweepFreeLocks();
      const records = await this.state.list();
      const fingerprint = await fingerprintPlugins(this.config.pluginDir, this.controller.signal);
      const { restorable, failed: notRestorable } = await restorableWithVolumesDir(records, this.config.volumesDir);
      const report = await restoreVolumes(restorable, this.config, {
        signal: this.controller.signal,
        ...(this.options.restoreConcurrency ? { concurrency: this.options.restoreConcurrency } : {}),
      });
      report.failed.push(...notRestorable);
      if (this.controller.signal.aborted) {
        throw new AgentError('AGENT_SHUT_DOWN', 'the agent shut down while restoring volumes; start it again to restore them');
      }
      // The node reports the path create returned this time, as Nomad does; keep it for the next command.
      for (const r of report.restored) if (r.path !== r.record.HostPath) await this.state.put({ ...r.record, HostPath: r.path });
      const failures = new Map<string, VolumeFailure>();
      const at = new Date().toISOString();
      for (const f of report.failed) failures.set(f.record.ID, { error: f.error.message, code: f.error.code ?? 'UNKNOWN', at });
      await this.health.replaceAll(failures);
      await saveNodeFacts(this.config.dataDir, { fingerprint, fingerprintedAt: at, restoredAt: at, restoreWarnings: report.warnings });
      for (const w of report.warnings) this.warn(w);
      return {
        nodeId: this.nodeId,
        fingerprint,
        restored: report.restored.map((r) => toHostVolume({ ...r.record, HostPath: r.path }, undefined)),
        failed: report.failed.map((f) => ({
          volume: toHostVolume(f.record, failures.get(f.record.ID)),
          error: { code: f.error.code ?? 'UNKNOWN', message: f.error.message },
        })),
        warnings: report.warnings,
      };
    });
  }

  /** Shuts down (aborting plugin runs in flight), optionally simulates a host reboot, and starts again. */
  async restart(options: { reboot?: boolean } = {}): Promise<StartReport> {
    await this.shutdown();
    const reboot = options.reboot ? await simulateReboot(this.config) : undefined;
    const report = await this.start();
    return reboot ? { ...report, reboot } : report;
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

  /** Discovers and fingerprints plugins again, and keeps the result as the node's attributes. */
  async fingerprint(): Promise<Fingerprint> {
    return this.track(async () => {
      const fingerprint = await fingerprintPlugins(this.config.pluginDir, this.controller.signal);
      const previous = await loadNodeFacts(this.config.dataDir);
      // A cache: a read-only command (node status) must work on a full disk.
      await saveNodeFacts(this.config.dataDir, {
        restoreWarnings: [],
        ...previous,
        fingerprint,
        fingerprintedAt: new Date().toISOString(),
      }).catch(() => {});
      return fingerprint;
    });
  }

  async createVolume(spec: VolumeSpec): Promise<{ volume: HostVolume; created: boolean }> {
    return this.track(async () => {
      const { record, created } = await this.manager().create(spec);
      const volume = toHostVolume(record, undefined);
      this.warnIfShadowingStatic(volume);
      return { volume, created };
    });
  }

  async registerVolume(spec: VolumeSpec): Promise<{ volume: HostVolume; created: boolean }> {
    return this.track(async () => {
      const { record, created } = await this.manager().register(spec);
      const volume = toHostVolume(record, undefined);
      this.warnIfShadowingStatic(volume);
      return { volume, created };
    });
  }

  /** Deletes a volume named by its ID or a unique prefix of it. */
  async deleteVolume(ref: string): Promise<HostVolume> {
    return this.track(async () => {
      const record = await this.find(ref);
      await this.manager().delete(record);
      return toHostVolume(record, undefined);
    });
  }

  async volume(ref: string): Promise<HostVolume> {
    const record = await this.find(ref);
    return toHostVolume(record, (await this.health.judge([record])).get(record.ID));
  }

  async volumes(): Promise<HostVolume[]> {
    const records = await this.state.list();
    const failures = await this.health.judge(records);
    return records.map((r) => toHostVolume(r, failures.get(r.ID)));
  }

  /** The node as the servers see it: attributes from the last fingerprint, `HostVolumes` from ready volumes. */
  async status(): Promise<NodeStatus> {
    const facts = await this.facts();
    const volumes = await this.volumes();
    const ready = volumes.filter((v) => v.State === 'ready');
    const { hostVolumes, warnings } = buildHostVolumes(
      this.config.hostVolumes,
      ready.map((v) => ({ id: v.ID, name: v.Name, path: v.HostPath })),
    );
    return {
      node: {
        ID: this.nodeId,
        Name: hostname(),
        Datacenter: 'dc1',
        NodePool: this.config.nodePool,
        Status: 'ready',
        Attributes: facts.fingerprint.attributes,
        HostVolumes: hostVolumes,
      },
      skippedPlugins: facts.fingerprint.skipped,
      volumes,
      warnings: [...facts.restoreWarnings, ...warnings],
    };
  }

  /** The last fingerprint; a data dir that never had one gets one now, as an agent's first start would. */
  private async facts(): Promise<NodeFacts> {
    const facts = await loadNodeFacts(this.config.dataDir);
    if (facts) return facts;
    const fingerprint = await this.fingerprint();
    return { fingerprint, fingerprintedAt: new Date().toISOString(), restoreWarnings: [] };
  }

  private async find(ref: string): Promise<VolumeRecord> {
    const exact = await this.state.get(ref);
    if (exact) return exact;
    const matches = ref === '' ? [] : (await this.state.ids()).filter((id) => id.startsWith(ref));
    if (matches.length === 1) return (await this.state.get(matches[0]!))!;
    if (matches.length > 1) {
      throw new AgentError('VOLUME_ID_AMBIGUOUS', `prefix "${ref}" matches ${matches.length} volumes (${matches.slice(0, 5).join(', ')}${matches.length > 5 ? ', ...' : ''}); give more of the ID`, {
        matches,
      });
    }
    throw new AgentError('VOLUME_NOT_FOUND', `no volume with ID or ID prefix "${ref}" on this node; run dhv volume status to list them`, { ref });
  }

  private manager(): VolumeManager {
    return new VolumeManager({
      config: this.config,
      nodeId: this.nodeId,
      state: this.state,
      names: this.names,
      health: this.health,
      signal: this.controller.signal,
      warn: (m) => this.warn(m),
    });
  }

  private warnIfShadowingStatic(volume: HostVolume): void {
    const dynamic = [{ id: volume.ID, name: volume.Name, path: volume.HostPath }];
    for (const w of buildHostVolumes(this.config.hostVolumes, dynamic).warnings) this.warn(w);
  }

  private warn(message: string): void {
    this.options.onWarning?.(message);
  }

  private async track<T>(fn: () => Promise<T>): Promise<T> {
    if (this.closed) throw new AgentError('AGENT_SHUT_DOWN', 'the agent has shut down; start it again (agent.start()) before using it');
    const run = fn();
    this.inflight.add(run);
    try {
      return await run;
    } finally {
      this.inflight.delete(run);
    }
  }
}
