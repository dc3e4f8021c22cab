import { goParseBytes } from '@dhv/sdk';
import * as hcl1 from '../go/hcl1/index.js';
import { goParseInt } from '@dhv/sdk/client';

/** The keys Nomad's CLI reads at the top of a host volume spec; any other key it ignores. */
export const SPEC_KEYS = [
  'id',
  'name',
  'namespace',
  'type',
  'plugin_id',
  'node_pool',
  'node_id',
  'host_path',
  'capacity',
  'capacity_min',
  'capacity_max',
  'capability',
  'constraint',
  'parameters',
] as const;

/**
 * What a user should know about a spec that Nomad reads without complaint: an unquoted
 * `0755` is octal to HCL 1 (493), `0x1ed` hexadecimal, and a misspelt key is ignored.
 * Reads the text again on its own (a spec Nomad refuses still gets its warnings).
 */
export function specWarnings(text: string): string[] {
  let list: hcl1.ObjectList;
  try {
    list = hcl1.parseHcl1(text);
  } catch {
    return [];
  }
  const warnings: string[] = [];
  for (const item of list.items) {
    const key = item.keys[0]?.value;
    if (key === undefined || (SPEC_KEYS as readonly string[]).includes(key)) continue;
    const near = nearest(key, SPEC_KEYS);
    warnings.push(
      `unknown key ${JSON.stringify(key)} is ignored, as Nomad ignores it${near ? ` (did you mean ${near}?)` : ''}`,
    );
  }
  warnings.push(...capacityWarnings(list));
  walk(list, (literal) => {
    const t = literal.token.text;
    if (literal.token.type !== 'NUMBER' || !/^-?0([xX][0-9a-fA-F]+|[0-7]+)$/.test(t)) return;
    const hex = /^-?0[xX]/.test(t);
    const parsed = goParseInt(t);
    if (!parsed.ok) return; // out of int64: the decoder refuses it in Nomad's words
    const value = parsed.value.toString();
    warnings.push(
      `the unquoted number ${t} is ${value} to Nomad's HCL reader (${hex ? 'hexadecimal' : 'octal'}); quote it ("${t}") to keep the digits`,
    );
  });
  return warnings;
}

function walk(node: hcl1.Node, visit: (literal: hcl1.Literal) => void): void {
  switch (node.kind) {
    case 'literal':
      visit(node);
      break;
    case 'list':
      node.items.forEach((n) => walk(n, visit));
      break;
    case 'object':
      walk(node.list, visit);
      break;
    case 'objectList':
      node.items.forEach((i) => walk(i.val, visit));
  }
}

/** The known key closest to a misspelt one (at most a third of its letters changed), if any. */
export function nearest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = editDistance(key.toLowerCase(), candidate);
    const prefix = candidate.startsWith(key.toLowerCase()) || key.toLowerCase().startsWith(candidate);
    // A key cut short (`plugin` for `plugin_id`) is near, but a one-letter slip is nearer.
    const score = prefix ? Math.min(d, 1.5) : d;
    if (score < bestDistance) {
      bestDistance = score;
      best = candidate;
    }
  }
  return best !== undefined && bestDistance <= Math.max(1, Math.floor(key.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = current;
    }
  }
  return row[b.length]!;
}

/**
 * A capacity Nomad reads as another number than the one written: go-humanize reads the
 * digits as a float64 (past 2^53 they round) and Nomad keeps the bytes in an int64, so
 * 8 EiB and more wrap to a negative size.
 */
function capacityWarnings(list: hcl1.ObjectList): string[] {
  const warnings: string[] = [];
  for (const key of ['capacity_min', 'capacity_max', 'capacity']) {
    const first = hcl1.elemItems(hcl1.filterItems(list, key)).items[0];
    if (first?.val.kind !== 'literal') continue;
    const literal = first.val.token.text.replace(/^"+|"+$/g, '');
    let read: bigint;
    try {
      read = BigInt.asIntN(64, goParseBytes(literal));
    } catch {
      continue;
    }
    const written = /^\d+$/.test(literal) ? BigInt(literal) : undefined;
    // A negative size is refused (volumeSpecFromText); a rounded one only said.
    if (read >= 0n && written !== undefined && written !== read)
      warnings.push(
        `${key} ${JSON.stringify(literal)} is ${read} to Nomad: its size reader goes through a float64 and keeps bytes in an int64, so sizes past 2^53 round; write it in a unit (GiB, TiB) or as Nomad reads it`,
      );
  }
  return warnings;
}
