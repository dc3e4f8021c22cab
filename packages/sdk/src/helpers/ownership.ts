import { goSyscallMode } from '../go/file-mode.js';
import { goQuote } from '../go/strconv.js';
import { goAtoi, goParseUint, type GoParsed } from '../go/strconv-parsers.js';

/**
 * The `mode`, `uid` and `gid` volume parameters, read exactly as Nomad's built-in `mkdir`
 * reads them (vectors/nomad-agent/builtin-mkdir.json), so one volume spec gives the same
 * directory with the built-in and with every plugin that sets an owner and permissions.
 */

/** The mode Nomad's `mkdir` gives a volume directory when the spec sets none. */
export const DEFAULT_VOLUME_MODE = 0o700;

/** (uid_t)-1: chown(2) leaves the owner, or the group, as it is. */
const KEEP_OWNER = 0xffffffff;

export type ParsedParameter<T> = { ok: true; value: T } | { ok: false; problem: string };

/**
 * Nomad's built-in `mkdir` reading one of its parameters; the agent's built-in and the
 * helpers below all read them here.
 * - `mode`: `strconv.ParseUint(value, 8, 32)`, octal digits only (`0755`, `755`; no `0o`,
 *   sign, space or `_`), kept as the Go `os.FileMode` it is (see {@link goSyscallMode}).
 * - `uid`, `gid`: `strconv.Atoi(value)`, then the low 32 bits chown(2)'s `uid_t` keeps:
 *   `+1000` is 1000; `-1` and `4294967295` leave the owner; `-5` is 4294967291 and
 *   `4294967296` is 0, which is root.
 *
 * A refused value gives Nomad's error: `invalid value for "mode": strconv.ParseUint:
 * parsing "0o755": invalid syntax`.
 */
export function readMkdirParameter(name: 'mode' | 'uid' | 'gid', value: string): GoParsed<number> {
  const parsed = name === 'mode' ? goParseUint(value, 8, 32) : goAtoi(value);
  if (!parsed.ok) return { ok: false, error: `invalid value for ${goQuote(name)}: ${parsed.error}` };
  return { ok: true, value: Number(BigInt.asUintN(32, parsed.value)) };
}

/**
 * The permission bits for chmod(2) (the umask does not apply), as Nomad's `mkdir` sets
 * them: octal digits, where Unix setuid, setgid and sticky are DROPPED (`2775` gives 0775,
 * `1777` gives 0777, `0o750` is refused); only Go's own mode bits set them (`20000775`
 * gives 02775, `4000777` gives 01777, `40000755` gives 04755).
 */
export function parseModeParameter(value: string): ParsedParameter<number> {
  const read = readMkdirParameter('mode', value);
  if (!read.ok) return { ok: false, problem: `${read.error} (mode is octal digits, such as "0750")` };
  return { ok: true, value: goSyscallMode(read.value) };
}

/**
 * A user or group ID for chown(2), as Nomad's `mkdir` passes it: undefined (leave as is)
 * for `-1` or `4294967295`. Values outside 0..4294967295 are NOT refused: they wrap to 32
 * bits as in Nomad, so `-5` is 4294967291 and `4294967296` is 0, which makes root the
 * owner. Check the number a spec gives.
 */
export function parseOwnerParameter(name: 'uid' | 'gid', value: string): ParsedParameter<number | undefined> {
  const read = readMkdirParameter(name, value);
  if (!read.ok) {
    const what = name === 'uid' ? 'user' : 'group';
    return { ok: false, problem: `${read.error} (${name} is a numeric ${what} ID, such as "1000")` };
  }
  return { ok: true, value: read.value === KEEP_OWNER ? undefined : read.value };
}
