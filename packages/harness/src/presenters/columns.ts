/** Nomad's CLI layouts: aligned `key = value` blocks and space-separated columns. */

export const NONE = '<none>';

/** `ID        = 1e1d4540-...` lines, keys padded to the longest, empty values shown as `<none>`. */
export function keyValues(rows: ReadonlyArray<readonly [string, string]>, indent = ''): string {
  const width = Math.max(0, ...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${indent}${k.padEnd(width)} = ${v === '' ? NONE : v}`).join('\n');
}

/** Columns separated by two spaces, as Nomad's columnize prints them. */
export function columns(header: readonly string[], rows: ReadonlyArray<readonly string[]>, indent = ''): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all
    .map(
      (r) =>
        indent +
        r
          .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!)))
          .join('  ')
          .trimEnd(),
    )
    .join('\n');
}

/** RFC 3339 in local time with its offset, as Nomad prints the time a volume became ready: `2024-12-05T17:06:46-05:00`. */
export function localTimestamp(date = new Date()): string {
  const pad = (n: number) => String(Math.abs(n)).padStart(2, '0');
  const offset = -date.getTimezoneOffset();
  const zone = offset === 0 ? 'Z' : `${offset > 0 ? '+' : '-'}${pad(Math.trunc(offset / 60))}:${pad(offset % 60)}`;
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}${zone}`
  );
}
