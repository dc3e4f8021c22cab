/**
 * The `mode`, `uid` and `gid` volume parameters, read as Nomad's built-in `mkdir` reads
 * them, so one volume spec works with every plugin that sets a directory's owner and
 * permissions.
 */

/** The mode Nomad's `mkdir` gives a volume directory when the spec sets none. */
export const DEFAULT_VOLUME_MODE = 0o700;

/** chown(2) reads (uid_t)-1 as "leave as is", so the largest real ID is one less. */
export const MAX_OWNER_ID = 2 ** 32 - 2;

export type ParsedParameter<T> = { ok: true; value: T } | { ok: false; problem: string };

/** An octal permission string (`0755`, `1777`, `0o750`), applied exactly: the umask does not apply. */
export function parseModeParameter(value: string): ParsedParameter<number> {
  if (/^(0o)?[0-7]+$/i.test(value)) {
    const mode = Number.parseInt(value.replace(/^0o/i, ''), 8);
    if (mode <= 0o7777) return { ok: true, value: mode };
  }
  return {
    ok: false,
    problem: `parameter "mode" must be an octal permission such as "0750" (at most 7777), got ${JSON.stringify(value)}`,
  };
}

/** A numeric user or group ID; `-1` means leave as is, as Nomad's `mkdir` passes it straight to chown. */
export function parseOwnerParameter(name: 'uid' | 'gid', value: string): ParsedParameter<number | undefined> {
  if (value === '-1') return { ok: true, value: undefined };
  if (/^[0-9]+$/.test(value) && Number(value) <= MAX_OWNER_ID) return { ok: true, value: Number(value) };
  const what = name === 'uid' ? 'user' : 'group';
  return {
    ok: false,
    problem: `parameter "${name}" must be a numeric ${what} ID from 0 to ${MAX_OWNER_ID}, got ${JSON.stringify(value)}`,
  };
}
