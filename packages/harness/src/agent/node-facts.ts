import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentError } from './errors.js';
import { readRegularFile, writeFileDurably } from './durable-file.js';
import type { Fingerprint } from './plugins.js';

/**
 * What the last agent start found: the plugin fingerprint (node attributes) and the
 * warnings of the last restore. Kept in the data dir so every `dhv` command (a new
 * process) reports the node as the running agent last saw it.
 */
export interface NodeFacts {
  fingerprint: Fingerprint;
  fingerprintedAt: string;
  restoredAt?: string | undefined;
  restoreWarnings: string[];
}

export function nodeFactsFile(dataDir: string): string {
  return join(dataDir, 'client', 'node.json');
}

export async function loadNodeFacts(dataDir: string): Promise<NodeFacts | undefined> {
  try {
    return JSON.parse(await readRegularFile(nodeFactsFile(dataDir))) as NodeFacts;
  } catch {
    // Missing or unreadable: only the last fingerprint is lost, and the agent takes a new one.
    return undefined;
  }
}

export async function saveNodeFacts(dataDir: string, facts: NodeFacts): Promise<void> {
  try {
    await mkdir(join(dataDir, 'client'), { recursive: true, mode: 0o700 });
    await writeFileDurably(nodeFactsFile(dataDir), `${JSON.stringify(facts, null, 2)}\n`);
  } catch (err) {
    const full = (err as NodeJS.ErrnoException).code === 'ENOSPC';
    throw new AgentError(
      'STATE_WRITE_FAILED',
      `could not save the node's facts to ${nodeFactsFile(dataDir)}: ${full ? 'no space left on device' : (err as Error).message}` +
        (full ? `\nThe disk holding the data dir ${dataDir} is full: free space there (dhv volume delete works on a full disk), then run this again` : ''),
      { file: nodeFactsFile(dataDir) },
    );
  }
}
