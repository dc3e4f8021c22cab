import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { withVolumeLock } from '@dhv/sdk';
import { AgentError } from '../../errors/agent-error.js';
import { readRegularFile, writeFileDurably } from './durable-file.js';
import type { HostVolumeMap } from '../host-volumes.js';
import type { Fingerprint } from '../plugins.js';
import { stateLayout } from './layout.js';

/** A volume's state as Nomad's servers compute it from what the node reports. */
export type VolumeState = 'pending' | 'ready' | 'unavailable';

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
  volumeStates: Record<string, VolumeState>;
}

export function nodeFactsFile(dataDir: string): string {
  return stateLayout(dataDir).nodeFacts;
}

export async function loadNodeFacts(dataDir: string): Promise<NodeFacts | undefined> {
  try {
    const facts = JSON.parse(await readRegularFile(nodeFactsFile(dataDir))) as Partial<NodeFacts>;
    if (!facts.fingerprint) return undefined;
    return { restoreWarnings: [], hostVolumes: {}, volumeStates: {}, fingerprintedAt: '', ...facts } as NodeFacts;
  } catch {
    // Missing or unreadable: only what the node last reported is lost, and the agent starts again.
    return undefined;
  }
}

export async function saveNodeFacts(dataDir: string, facts: NodeFacts): Promise<void> {
  try {
    await mkdir(stateLayout(dataDir).client, { recursive: true, mode: 0o700 });
    await writeFileDurably(nodeFactsFile(dataDir), `${JSON.stringify(facts)}\n`);
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
