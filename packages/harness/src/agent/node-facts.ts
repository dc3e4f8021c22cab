import { mkdir, readFile } from 'node:fs/promises';
import { writeFileDurably } from './durable-file.js';
import type { Fingerprint } from './plugins.js';
import { dataDirLayout } from '../config/data-dir.js';

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
  return dataDirLayout(dataDir).nodeFacts;
}

export async function loadNodeFacts(dataDir: string): Promise<NodeFacts | undefined> {
  try {
    return JSON.parse(await readFile(nodeFactsFile(dataDir), 'utf8')) as NodeFacts;
  } catch {
    // Missing or unreadable: only the last fingerprint is lost, and the agent takes a new one.
    return undefined;
  }
}

export async function saveNodeFacts(dataDir: string, facts: NodeFacts): Promise<void> {
  await mkdir(dataDirLayout(dataDir).client, { recursive: true, mode: 0o700 });
  await writeFileDurably(nodeFactsFile(dataDir), `${JSON.stringify(facts, null, 2)}\n`);
}
