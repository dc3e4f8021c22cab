import {
  DEFAULT_VOLUME_MODE,
  parseModeParameter,
  parseOwnerParameter,
  PluginFailure,
  type Parameters,
  type ParsedParameter,
} from '@dhv/sdk/plugin';

/** What a volume spec's `parameters` block may ask of dhv-mkdir. */
export interface MkdirParameters {
  /** Permission bits applied exactly (umask ignored), as Nomad's built-in mkdir reads `mode` (Unix setuid/setgid/sticky dropped). */
  mode: number;
  /** Owner to set; undefined leaves the owner the process creates it with (the agent's user). */
  uid: number | undefined;
  gid: number | undefined;
}

export const DEFAULT_MODE = DEFAULT_VOLUME_MODE;
export const PARAMETER_NAMES = ['mode', 'uid', 'gid'] as const;

// The value rules are the SDK's, shared with dhv-loopback, so one spec reads the same in both.
const PARSERS: Record<(typeof PARAMETER_NAMES)[number], (value: string) => ParsedParameter<number | undefined>> = {
  mode: parseModeParameter,
  uid: (value) => parseOwnerParameter('uid', value),
  gid: (value) => parseOwnerParameter('gid', value),
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
