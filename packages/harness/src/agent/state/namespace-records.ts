import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentError } from '../../errors/agent-error.js';
import { readRegularFile, removeFileDurably, writeFileDurably } from './durable-file.js';
import type { StateLayout } from './layout.js';

/** What the servers keep of a namespace (Nomad's Namespace, the fields dhv models). */
export interface NamespaceRecord {
  Name: string;
  Description: string;
  CreateIndex: number;
  ModifyIndex: number;
}

export const DEFAULT_NAMESPACE = 'default';

/** Nomad's `validNamespaceName`: also what makes a name safe as a file name here. */
export const NAMESPACE_NAME = /^[a-zA-Z0-9-]{1,128}$/;

/** The namespace every Nomad cluster starts with, as its state store writes it at index 1. */
const DEFAULT_RECORD: NamespaceRecord = {
  Name: DEFAULT_NAMESPACE,
  Description: 'Default shared namespace',
  CreateIndex: 1,
  ModifyIndex: 1,
};

/**
 * The namespaces, one file each (`client/namespaces/<name>.json`, written by rename after
 * fsync as every record). `default` always exists: its file is written only once it changes.
 */
export class NamespaceRecords {
  constructor(private readonly layout: StateLayout) {}

  private file(name: string): string {
    return join(this.layout.namespaces, `${name}.json`);
  }

  /** The namespace called exactly `name`, or undefined (a name Nomad would refuse is never stored). */
  async get(name: string): Promise<NamespaceRecord | undefined> {
    if (!NAMESPACE_NAME.test(name)) return undefined;
    const stored = await readRecord(this.file(name));
    return stored ?? (name === DEFAULT_NAMESPACE ? DEFAULT_RECORD : undefined);
  }

  /** Every namespace, `default` included, sorted by name. */
  async all(): Promise<NamespaceRecord[]> {
    let names: string[];
    try {
      names = await readdir(this.layout.namespaces);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      names = [];
    }
    const stored = names
      .filter((n) => n.endsWith('.json') && NAMESPACE_NAME.test(n.slice(0, -'.json'.length)))
      .map((n) => readRecord(join(this.layout.namespaces, n)));
    const found = (await Promise.all(stored)).filter((r): r is NamespaceRecord => r !== undefined);
    if (!found.some((r) => r.Name === DEFAULT_NAMESPACE)) found.push(DEFAULT_RECORD);
    return found.sort((a, b) => (a.Name < b.Name ? -1 : a.Name > b.Name ? 1 : 0));
  }

  async put(record: NamespaceRecord): Promise<void> {
    if (!NAMESPACE_NAME.test(record.Name))
      throw new Error(`namespace name ${JSON.stringify(record.Name)} is not valid`);
    await mkdir(this.layout.namespaces, { recursive: true, mode: 0o700 });
    await writeFileDurably(this.file(record.Name), JSON.stringify(record));
  }

  async remove(name: string): Promise<void> {
    if (NAMESPACE_NAME.test(name)) await removeFileDurably(this.file(name));
  }
}

async function readRecord(path: string): Promise<NamespaceRecord | undefined> {
  let text: string;
  try {
    text = await readRegularFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const record = JSON.parse(text) as NamespaceRecord;
    if (typeof record.Name === 'string' && typeof record.Description === 'string') return record;
  } catch {
    // said below
  }
  throw new AgentError(
    'STATE_CORRUPT',
    `namespace file ${path} is corrupt (not a namespace record): repair it, or remove it and apply the namespace again with dhv namespace apply`,
    { file: path },
  );
}
