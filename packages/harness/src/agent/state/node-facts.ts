import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { withVolumeLock } from '@dhv/sdk';
import { AgentError } from '../../errors/agent-error.js';
import { readRegularFileSync, writeFileDurably } from './durable-file.js';
import type { HostVolumeConfig, HostVolumeMap } from '../host-volumes.js';
import type { Fingerprint } from '../plugins.js';
import { stateLayout } from './layout.js';

const VOLUME_STATES = ['pending', 'ready', 'unavailable'] as const;

/** A volume's state as Nomad's servers compute it from what the node reports. */
export type VolumeState = (typeof VOLUME_STATES)[number];

/**
 * What the node has reported, as a real agent holds it in memory and the servers see it:
 * the plugin fingerprint (node attributes), the `HostVolumes` map, the warnings of the
 * last restore, and the state the servers computed for each of the node's volumes.
 * Every `dhv` command is a new process, so this lives in the data dir, changed only
 * under the node's lock.
 */
export interface NodeFacts {
  fingerprint: Fingerprint;
  fingerprintedAt: string;
  restoredAt?: string | undefined;
  restoreWarnings: string[];
  hostVolumes: HostVolumeMap;
  volumeStates: VolumeStates;
}

/** The state of each of the node's volumes, by volume ID. */
export type VolumeStates = ReadonlyMap<string, VolumeState>;

export function nodeFactsFile(dataDir: string): string {
  return stateLayout(dataDir).nodeFacts;
}

export async function loadNodeFacts(dataDir: string): Promise<NodeFacts | undefined> {
  try {
    return decodeNodeFacts(JSON.parse(readRegularFileSync(nodeFactsFile(dataDir))));
  } catch {
    // Missing or unreadable: only what the node last reported is lost, and the agent starts again.
    return undefined;
  }
}

/**
 * `node.json` as written (format 2): the node's map as one `[name, path, read only, ID]` per
 * volume (the volume's own name appended only when it differs from its key) and the
 * servers' states as one list of volume IDs per state. Lists, not objects keyed by name
 * or ID: for 10,000 volumes they parse in half the time.
 */
interface NodeFactsFile extends Omit<NodeFacts, 'hostVolumes' | 'volumeStates'> {
  format: 2;
  hostVolumes: HostVolumeRow[];
  volumeStates: Partial<Record<VolumeState, string[]>>;
}

type HostVolumeRow = [name: string, path: string, readOnly: boolean, id: string, ownName?: string];

/** `node.json` as an earlier dhv wrote it: both maps as objects. */
interface NodeFactsFileV1 extends Omit<NodeFacts, 'hostVolumes' | 'volumeStates'> {
  format?: undefined;
  hostVolumes?: Record<string, HostVolumeConfig>;
  volumeStates?: Record<string, VolumeState>;
}

function encodeNodeFacts(facts: NodeFacts): NodeFactsFile {
  // forEach, not for-of with destructuring: these loops run once per process, before V8
  // has optimised anything, where each destructuring walks an iterator.
  const hostVolumes: HostVolumeRow[] = [];
  facts.hostVolumes.forEach((v, name) =>
    hostVolumes.push(v.Name === name ? [name, v.Path, v.ReadOnly, v.ID] : [name, v.Path, v.ReadOnly, v.ID, v.Name]),
  );
  const volumeStates: Partial<Record<VolumeState, string[]>> = {};
  facts.volumeStates.forEach((state, id) => (volumeStates[state] ??= []).push(id));
  return { ...facts, format: 2, hostVolumes, volumeStates };
}

function decodeNodeFacts(file: Partial<NodeFactsFile> | Partial<NodeFactsFileV1>): NodeFacts | undefined {
  if (!file.fingerprint) return undefined;
  const { format, hostVolumes, volumeStates, ...rest } = file;
  const facts = { restoreWarnings: [], fingerprintedAt: '', ...rest } as Omit<
    NodeFacts,
    'hostVolumes' | 'volumeStates'
  >;
  if (format !== 2) {
    const v1 = file as Partial<NodeFactsFileV1>;
    return {
      ...facts,
      hostVolumes: new Map(Object.entries(v1.hostVolumes ?? {})),
      volumeStates: new Map(Object.entries(v1.volumeStates ?? {})),
    };
  }
  const rows = hostVolumes ?? [];
  const lists = (volumeStates ?? {}) as NodeFactsFile['volumeStates'];
  if (!Array.isArray(rows) || !rows.every(Array.isArray) || typeof lists !== 'object') return undefined;
  const map = new Map<string, HostVolumeConfig>();
  for (const row of rows) map.set(row[0], { Name: row[4] ?? row[0], Path: row[1], ReadOnly: row[2], ID: row[3] });
  const states = new Map<string, VolumeState>();
  for (const state of VOLUME_STATES) for (const id of lists[state] ?? []) states.set(id, state);
  return { ...facts, hostVolumes: map, volumeStates: states };
}

export async function saveNodeFacts(dataDir: string, facts: NodeFacts): Promise<void> {
  try {
    await mkdir(stateLayout(dataDir).client, { recursive: true, mode: 0o700 });
    await writeFileDurably(nodeFactsFile(dataDir), `${JSON.stringify(encodeNodeFacts(facts))}\n`);
  } catch (err) {
    const full = (err as NodeJS.ErrnoException).code === 'ENOSPC';
    throw new AgentError(
      'STATE_WRITE_FAILED',
      `could not save the node's facts to ${nodeFactsFile(dataDir)}: ${full ? 'no space left on device' : (err as Error).message}` +
        (full
          ? `\nThe disk holding the data dir ${dataDir} is full: free space there (dhv volume delete works on a full disk), then run this again`
          : ''),
      { file: nodeFactsFile(dataDir) },
    );
  }
}

/** Reads, changes and writes the node's facts under the node's lock, so concurrent `dhv` commands lose no update. */
export async function updateNodeFacts(
  dataDir: string,
  change: (facts: NodeFacts | undefined) => NodeFacts | Promise<NodeFacts>,
): Promise<NodeFacts> {
  const lockDir = stateLayout(dataDir).locks;
  await mkdir(lockDir, { recursive: true, mode: 0o700 });
  return withVolumeLock(join(lockDir, 'node.lock'), async () => {
    const next = await change(await loadNodeFacts(dataDir));
    await saveNodeFacts(dataDir, next);
    return next;
  });
}
