import { randomUUID } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { isUuid } from '@dhv/sdk';
import { AgentError } from '../../errors/agent-error.js';
import { stateLayout } from './layout.js';

/**
 * The node ID, generated once and kept in the data dir (Nomad keeps `client/client-id`).
 * Two processes starting on a fresh data dir at once agree on one ID: the file is
 * published with link(), which only one of them can win.
 */
export async function loadNodeId(dataDir: string): Promise<string> {
  const { client: dir, nodeId: file } = stateLayout(dataDir);
  const existing = await readId(file);
  if (existing !== undefined) return existing;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${randomUUID()}\n`, { mode: 0o600 });
  try {
    await link(temp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await unlink(temp).catch(() => {});
  }
  const id = await readId(file);
  if (id === undefined) throw new AgentError('STATE_UNREADABLE', `cannot read the node ID from ${file}`, { file });
  return id;
}

async function readId(file: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const id = text.trim();
  if (!isUuid(id)) {
    throw new AgentError(
      'STATE_CORRUPT',
      `node ID file ${file} does not hold a UUID; repair it or remove it to give this node a new ID`,
      { file },
    );
  }
  return id;
}
