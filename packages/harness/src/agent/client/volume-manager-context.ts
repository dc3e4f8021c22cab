import type { AgentConfig } from '../../config/agent-config.js';
import type { PluginRunner } from '@dhv/sdk/client';
import type { ClientState } from '../state/client-state.js';
import type { HostVolumeConfig, HostVolumeUpdate } from '../host-volumes.js';
import type { AgentLock } from '../state/agent-lock.js';
import type { NameClaims } from '../state/name-claims.js';
import type { VolumeHealth } from '../state/volume-health.js';
import type { VolumeDisks } from '../state/volume-disks.js';
import type { VolumeMounts } from '../state/volume-mounts.js';
import type { ClientDeleteRequest } from './plugin-requests.js';

/** What the host volume manager works with (its create, register and delete, and its restore), and what both tell the node. */

/** The client state calls the host volume manager makes; a test may hand in one that fails. */
export type ClientStateStore = Pick<ClientState, 'put' | 'remove' | 'list' | 'scan' | 'get'>;

/** A warn or error line as Nomad's host volume manager logs it, with its fields. */
export interface AgentLogLine {
  level: 'warn' | 'error';
  message: string;
  fields: Record<string, string>;
}

export interface VolumeManagerContext {
  config: Pick<AgentConfig, 'volumesDir' | 'pluginDir' | 'nodePool'>;
  runner: PluginRunner;
  state: ClientStateStore;
  names: NameClaims;
  /** The agent lock: each volume's work holds its name, a restore holds the whole agent. */
  lock: AgentLock;
  /** Tells the node about a volume (or its removal); the node's map and the servers follow. */
  publish: (updates: HostVolumeUpdate[]) => Promise<void>;
  /** Aborted when the agent shuts down: every plugin run in flight is killed. */
  signal: AbortSignal;
  log: (line: AgentLogLine) => void;
  /** Marks a volume unavailable while its delete runs, so a killed delete never leaves it ready. */
  health?: VolumeHealth;
  /** The disk each volume was created on: the built-in mkdir's restore line says when it moved. */
  disks?: VolumeDisks;
  /** The mounts each volume's plugin made, by identity: recorded at create and restore. */
  mounts?: VolumeMounts;
  /** The servers' refusal of a delete (a volume in use), checked under the volume's lock before anything runs. */
  beforeDelete?: (req: ClientDeleteRequest) => Promise<void>;
}

export function hostVolume(name: string, id: string, path: string): HostVolumeConfig {
  return { Name: name, Path: path, ReadOnly: false, ID: id };
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
