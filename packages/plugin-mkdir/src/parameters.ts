import { PluginFailure, type Parameters } from '@dhv/sdk/plugin';

/** What a volume spec's `parameters` block may ask of dhv-mkdir. */
export interface MkdirParameters {
  /** Permission bits applied exactly (umask ignored), including setuid, setgid and sticky. */
  mode: number;
  /** Owner to set; undefined leaves the owner the process creates it with (the agent's user). */
  uid: number | undefined;
  gid: number | undefined;
}

export const DEFAULT_MODE = 0o700;
export const PARAMETER_NAMES = ['mode', 'uid', 'gid'] as const;

/** The kernel reads (uid_t)-1 as "leave as is", so the largest real ID is one less. */
const MAX_ID = 2 ** 32 - 2;

type Parsed = { ok: true; value: number | undefined } | { ok: false; problem: string };

function parseMode(value: string): Parsed {
  if (/^(0o)?[0-7]+$/i.test(value)) {
    const mode = Number.parseInt(value.replace(/^0o/i, ''), 8);
    if (mode <= 0o7777) return { ok: true, value: mode };
  }
  return { ok: false, problem: `parameter "mode" must be an octal permission such as "0750" (at most 7777), got ${JSON.stringify(value)}` };
}

function parseId(name: 'uid' | 'gid', what: string) {
  return (value: string): Parsed => {
    // Nomad's built-in mkdir passes -1 straight to chown, which means "leave as is"; accept it as such.
    if (value === '-1') return { ok: true, value: undefined };
    if (/^[0-9]+$/.test(value) && Number(value) <= MAX_ID) return { ok: true, value: Number(value) };
    return { ok: false, problem: `parameter "${name}" must be a numeric ${what} ID from 0 to ${MAX_ID}, got ${JSON.stringify(value)}` };
  };
}

const PARSERS: Record<(typeof PARAMETER_NAMES)[number], (value: string) => Parsed> = {
  mode: parseMode,
  uid: parseId('uid', 'user'),
  gid: parseId('gid', 'group'),
};

function isKnown(name: string): name is (typeof PARAMETER_NAMES)[number] {
  return (PARAMETER_NAMES as readonly string[]).includes(name);
}

/**
 * Reads the volume spec's parameters, reporting every unknown name and bad value in one
 * error, so a spec can be fixed in one go.
 */
export function parseMkdirParameters(parameters: Parameters | null): MkdirParameters {
  const result: MkdirParameters = { mode: DEFAULT_MODE, uid: undefined, gid: undefined };
  const problems: string[] = [];
  for (const [name, value] of Object.entries(parameters ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!isKnown(name)) {
      problems.push(`unknown parameter ${JSON.stringify(name)} (dhv-mkdir accepts ${PARAMETER_NAMES.join(', ')})`);
      continue;
    }
    const parsed = PARSERS[name](value);
    if (!parsed.ok) problems.push(parsed.problem);
    else if (name === 'mode') result.mode = parsed.value ?? DEFAULT_MODE;
    else result[name] = parsed.value;
  }
  if (problems.length > 0) {
    throw new PluginFailure('EPARAMETER', `invalid parameters: ${problems.join('; ')}`, { problems });
  }
  return result;
}

export function formatMode(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}
