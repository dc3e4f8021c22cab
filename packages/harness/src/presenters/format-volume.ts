import { formatSize } from '@dhv/sdk';
import type { HostVolume } from '../agent/volume-view.js';
import { columns, keyValues } from './columns.js';
import { allocTable, type AllocRow } from './format-job.js';

export interface VolumeFormat {
  /** Only the `key = value` block: no Capabilities or Allocations (`-short`, and the create monitor). */
  short?: boolean;
  /** Full IDs in lists (`-verbose`); the detail block always shows them. */
  verbose?: boolean;
  indent?: string;
  /** The allocations that use the volume (Nomad's usage claims), for the Allocations table. */
  allocations?: readonly AllocRow[];
}

/** `nomad volume status <id>`: the detail block, then (unless short) Capabilities and Allocations. */
export function volumeDetail(
  v: HostVolume,
  { short = false, indent = '', allocations = [] }: VolumeFormat = {},
): string {
  const block = keyValues(
    [
      ['ID', v.ID],
      ['Name', v.Name],
      ['Namespace', v.Namespace],
      ['Plugin ID', v.PluginID],
      ['Node ID', v.NodeID],
      ['Node Pool', v.NodePool],
      // Nomad prints humanize.IBytes(uint64(CapacityBytes)): a plugin's -1 reads 16 EiB.
      ['Capacity', formatSize(BigInt.asUintN(64, v.CapacityBytes))],
      ['State', v.State],
      ...(v.StateError ? ([['State Error', v.StateError]] as const) : []),
      ['Host Path', v.HostPath],
    ].map(([k, value]) => [k, printable(value)] as const),
    indent,
  );
  if (short) return block;
  const capabilities = columns(
    ['Access Mode', 'Attachment Mode'],
    v.RequestedCapabilities.map((c) => [printable(c.AccessMode), printable(c.AttachmentMode)]),
    indent,
  );
  const allocs = allocations.length > 0 ? allocTable(allocations, indent) : `${indent}No allocations placed`;
  return `${block}\n\n${indent}Capabilities\n${capabilities}\n\n${indent}Allocations\n${allocs}`;
}

/** What `nomad volume status` says on stderr under the header when there are none (exit 0). */
export const NO_VOLUMES = 'No dynamic host volumes';

/**
 * `nomad volume status -type host`: the header, then the volumes sorted by ID, IDs cut to
 * 8 characters unless verbose. With none, the header alone: the caller says NO_VOLUMES on stderr.
 */
export function volumeList(volumes: readonly HostVolume[], format: VolumeFormat = {}): string {
  if (volumes.length === 0) return 'Dynamic Host Volumes';
  return `Dynamic Host Volumes\n${volumeTable(volumes, format)}`;
}

/** The table of `nomad volume status`, sorted by ID, IDs cut to 8 characters unless verbose. */
export function volumeTable(volumes: readonly HostVolume[], { verbose = false }: VolumeFormat = {}): string {
  const id = (value: string) => (verbose ? value : short(value));
  const sorted = [...volumes].sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0));
  return columns(
    ['ID', 'Name', 'Namespace', 'Plugin ID', 'Node ID', 'Node Pool', 'State'],
    sorted.map((v) =>
      [id(v.ID), v.Name, v.Namespace, v.PluginID || '<none>', id(v.NodeID), v.NodePool, v.State].map(printable),
    ),
  );
}

/**
 * Nomad's answer to a prefix that matches several volumes: its line, a blank line and
 * the table of the matches (`status` says "host volumes"; create, register and delete say "volumes").
 */
export function ambiguousPrefixText(
  volumes: readonly HostVolume[],
  { command, verbose = false }: { command: 'status' | 'create' | 'register' | 'delete'; verbose?: boolean },
): string {
  const what = command === 'status' ? 'host volumes' : 'volumes';
  return `Prefix matched multiple ${what}\n\n${volumeTable(volumes, { verbose })}`;
}

/**
 * The servers' warnings on a create or register, as Nomad's CLI prints them on stdout
 * before the result: `Volume Warnings:`, one per line, a blank line; bold yellow on a terminal.
 */
export function volumeWarningsText(warnings: readonly string[], { color = false } = {}): string {
  if (warnings.length === 0) return '';
  const text = `Volume Warnings:\n${warnings.map(printable).join('\n')}`;
  return `${color ? `\x1b[1m\x1b[33m${text}\x1b[0m` : text}\n\n`;
}

export function short(id: string): string {
  return id.slice(0, 8);
}

/**
 * A value from a user's spec, made safe for a terminal and for a table: control
 * characters (newline, CR, escape, ...) and format characters (the bidi overrides such as
 * U+202E, which would show the rest of a line reversed, zero-width ones) are shown as Go
 * escapes (`\n`, `\x1b`, `\u202e`), so a name cannot forge a row, hide its own text or
 * recolour the screen. Nomad prints them raw.
 */
export function printable(value: string): string {
  return value.replace(/[\p{Cc}\p{Cf}\u2028\u2029]/gu, (c) => {
    const named: Record<string, string> = {
      '\n': '\\n',
      '\r': '\\r',
      '\t': '\\t',
      '\b': '\\b',
      '\f': '\\f',
      '\v': '\\v',
      '\x07': '\\a',
    };
    const code = c.codePointAt(0)!;
    const hex = code.toString(16);
    return (
      named[c] ??
      (code < 0x100
        ? `\\x${hex.padStart(2, '0')}`
        : code < 0x10000
          ? `\\u${hex.padStart(4, '0')}`
          : `\\U${hex.padStart(8, '0')}`)
    );
  });
}

/** Colour on a terminal unless NO_COLOR is set (https://no-color.org), as Nomad's CLI colours only a terminal. */
export function colorOn(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && (env.NO_COLOR ?? '') === '';
}
