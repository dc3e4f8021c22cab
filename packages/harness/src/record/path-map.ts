import { createHash } from 'node:crypto';
import { basename, join } from 'node:path';
import { ENV } from '@dhv/sdk';
import type { RecordedCall } from './recorded-call.js';

/**
 * What a replay changes in a recorded call, and changes back in the answer: the agent's
 * volumes and plugin dirs become folders of the sandbox, and the real-agent vectors'
 * placeholders (`<ROOT>`, `<NODE>`, `<VOL1>`, `<VOL1:short>`...) become a folder and
 * UUIDs a plugin accepts, and a created path elsewhere on the host a folder of the sandbox.
 * Volume IDs a trace spells out are kept as they are.
 */
export class PathMap {
  /** [recorded, sandbox], longest recorded text first, so `<ROOT>/volumes` wins over `<ROOT>`. */
  private readonly forwardPairs: [string, string][];
  private readonly backwardPairs: [string, string][];

  constructor(pairs: [string, string][]) {
    this.forwardPairs = [...pairs].sort((a, b) => b[0].length - a[0].length);
    this.backwardPairs = pairs.map(([a, b]): [string, string] => [b, a]).sort((a, b) => b[0].length - a[0].length);
  }

  get pairs(): readonly [string, string][] {
    return this.forwardPairs;
  }

  forward(text: string): string {
    return replaceAll(text, this.forwardPairs);
  }

  backward(text: string): string {
    return replaceAll(text, this.backwardPairs);
  }

  /** Output bytes with sandbox paths put back; bytes that are not UTF-8 are left as they are. */
  backwardBytes(bytes: Buffer): Buffer {
    const text = bytes.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(bytes)) return bytes;
    return Buffer.from(this.backward(text), 'utf8');
  }
}

/** The map for a trace's calls, with the sandbox's folders it needs (to be made before the replay). */
export function pathMapFor(calls: readonly RecordedCall[], sandbox: string): { map: PathMap; folders: string[] } {
  const pairs: [string, string][] = [];
  const folders: string[] = [];
  const taken = new Set<string>();
  for (const [variable, name] of [
    [ENV.volumesDir, 'volumes'],
    [ENV.pluginDir, 'plugins'],
  ] as const) {
    const seen = new Set(calls.map((c) => c.env[variable]).filter((v): v is string => v !== undefined && v !== ''));
    let n = 1;
    for (const recorded of seen) {
      const folder = join(sandbox, n === 1 ? name : `${name}-${n}`);
      n++;
      pairs.push([recorded, folder]);
      folders.push(folder);
      taken.add(recorded);
    }
  }
  const placeholders = new Set<string>();
  for (const call of calls)
    for (const value of Object.values(call.env))
      for (const m of value.matchAll(/<([A-Z]+[0-9]*)(?::short)?>/g)) placeholders.add(m[1]!);
  for (const name of placeholders) {
    if (name === 'ROOT') {
      if (!taken.has('<ROOT>')) pairs.push(['<ROOT>', sandbox]);
      continue;
    }
    const uuid = uuidFor(name);
    pairs.push([`<${name}>`, uuid], [`<${name}:short>`, uuid.slice(0, 8)]);
  }
  // A created path outside every mapped folder (a registered volume's host_path, a plugin
  // that answered a path elsewhere) is moved into the sandbox too: a replayed delete must
  // never act on the host's own file.
  const inside = new PathMap(pairs);
  const recordedDirs = pairs.map(([recorded]) => recorded);
  let outside = 0;
  for (const call of calls) {
    const created = call.env[ENV.createdPath];
    if (created === undefined || !created.startsWith('/')) continue;
    if (recordedDirs.some((d) => created === d || created.startsWith(`${d}/`)) || pairs.some(([r]) => r === created))
      continue;
    const folder = join(sandbox, `outside-${++outside}`);
    folders.push(folder);
    pairs.push([created, join(folder, inside.forward(basename(created)))]);
  }
  return { map: new PathMap(pairs), folders };
}

/** A stable UUID for a placeholder, so a replay's volume IDs are the same every time. */
function uuidFor(name: string): string {
  const hex = createHash('sha256').update(`dhv replay ${name}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function replaceAll(text: string, pairs: readonly [string, string][]): string {
  if (pairs.length === 0) return text;
  let out = '';
  let at = 0;
  // One pass, longest match first at each place, so a replacement is never replaced again.
  outer: while (at < text.length) {
    for (const [from, to] of pairs) {
      if (from !== '' && text.startsWith(from, at)) {
        out += to;
        at += from.length;
        continue outer;
      }
    }
    out += text[at];
    at++;
  }
  return out;
}
