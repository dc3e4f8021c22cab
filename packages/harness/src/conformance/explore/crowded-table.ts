import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findTool } from '@dhv/sdk/plugin';
import { shellQuote } from '@dhv/sdk/host';

/**
 * A host condition of a real client: a mount table of many kilobytes (every task's tmpfs and
 * secrets mounts), where a fresh sandbox has a short one. A call run under it runs in a
 * mount namespace of dhv's own, copied from the host's when the call starts (the plugin sees
 * its own earlier mounts), to which dhv first adds CROWD_MOUNTS tmpfs mounts at long paths
 * inside the check's sandbox. The host's own table is never touched; the namespace, and
 * every mount in it, ends with the call. As root only: no one else may make mounts.
 */
export const CROWD_MOUNTS = 40;

const TOOLS = ['unshare', 'mount', 'mkdir', 'env'] as const;
type Tools = Record<(typeof TOOLS)[number], string>;

/** Where each tool is, by absolute path (a plugin runs with no PATH); undefined when one is missing. */
function findTools(): Tools | undefined {
  try {
    return Object.fromEntries(TOOLS.map((tool) => [tool, findTool(tool)])) as Tools;
  } catch {
    return undefined;
  }
}

/**
 * A program run in the plugin's place, with its argv and environment (nothing added: the
 * shell's own PWD is taken out), that runs it under the crowded table. `crowd` is an empty
 * folder of the sandbox; one tmpfs holds the mount points, so nothing is written on the host.
 */
function wrapper(tools: Tools, crowd: string, program: string): string {
  const point = `${shellQuote(crowd)}/alloc/"$(printf '%08x-5eed-4a11-8c0d-%012x' $i $i)"/task-with-a-long-name-$i/secrets`;
  return [
    '#!/bin/sh',
    `# dhv check: the call below runs under a mount table crowded with ${CROWD_MOUNTS} more mounts, in a mount namespace of its own.`,
    'if [ "${1-}" != --in-namespace ]; then',
    `  exec ${tools.unshare} --mount --propagation private /bin/sh "$0" --in-namespace "$@"`,
    'fi',
    'shift',
    'set -e',
    `${tools.mount} -t tmpfs -o size=1m dhv-crowd ${shellQuote(crowd)}`,
    'i=1',
    `while [ $i -lt ${CROWD_MOUNTS} ]; do`,
    `  ${tools.mkdir} -p ${point}`,
    `  ${tools.mount} -t tmpfs -o size=64k,noexec,nosuid,nodev dhv-crowd ${point}`,
    '  i=$((i + 1))',
    'done',
    `exec ${tools.env} -u PWD ${shellQuote(program)} "$@"`,
    '',
  ].join('\n');
}

export interface Crowding {
  /** The program to run in the plugin's place. */
  executable: string;
  /** How many bytes the crowded table prints (/proc/self/mounts, as `mount` lists it), measured just before. */
  tableBytes: number;
}

/**
 * Writes the program that runs `plugin` under the crowded table into `dir` (made here), and
 * measures the table by running `cat` under it; undefined when it cannot be made here (not
 * root, no unshare, a kernel or container that refuses new mount namespaces).
 */
export async function crowding(dir: string, plugin: string): Promise<Crowding | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const tools = findTools();
  if (tools === undefined) return undefined;
  const crowd = join(dir, 'crowd');
  await mkdir(crowd, { recursive: true });
  const probe = join(dir, 'crowded-cat');
  await writeFile(probe, wrapper(tools, crowd, '/bin/cat'), { mode: 0o755 });
  const table = await promisify(execFile)(probe, ['/proc/self/mounts'], { env: {}, maxBuffer: 1 << 24 }).catch(
    () => undefined,
  );
  if (table === undefined) return undefined;
  const executable = join(dir, 'crowded-plugin');
  await writeFile(executable, wrapper(tools, crowd, plugin), { mode: 0o755 });
  return { executable, tableBytes: Buffer.byteLength(table.stdout) };
}

/** The condition, as a verdict names it. */
export function crowdedWords(tableBytes: number): string {
  return `under a mount table of ${Math.round(tableBytes / 1024)} KiB (${CROWD_MOUNTS} extra mounts, as task tmpfs and secrets mounts make on a real client)`;
}
