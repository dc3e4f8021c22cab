import { encodeJson } from '@dhv/sdk';
import { goMarshalStringMap } from '@dhv/sdk/client';
import { AgentError } from '../errors/agent-error.js';
import { MAX_DOCUMENT_DEPTH, nestingDepth, readSource } from '../config/read-document.js';
import { decodeVolumeSpecAsNomad, SpecRefused, type ApiHostVolume } from './decode-host-volume.js';
import {
  ACCESS_MODES,
  ATTACHMENT_MODES,
  hostVolumeValidationError,
  validateHostVolume,
} from './validate-host-volume.js';
import { specWarnings } from './spec-warnings.js';
import { multierrorText } from '../go/multierror.js';

export { ACCESS_MODES, ATTACHMENT_MODES };
export type AccessMode = (typeof ACCESS_MODES)[number];
export type AttachmentMode = (typeof ATTACHMENT_MODES)[number];

export interface Capability {
  accessMode: AccessMode;
  attachmentMode: AttachmentMode;
}

/**
 * One `constraint` block as Nomad's CLI builds it: `attribute` (LTarget), `operator`
 * (Operand, `=` when none is given; the `version`, `semver`, `regexp` and `set_contains`
 * shorthands set it) and `value` (RTarget). The agent evaluates it against the node.
 */
export interface Constraint {
  attribute: string;
  operator: string;
  value: string;
}

/** Nomad's name for the plugin of a spec without `plugin_id` (structs.DefaultHostVolumePlugin). */
export const DEFAULT_PLUGIN_ID = 'default';

/** A volume specification as `nomad volume create` / `register` reads it (PROTOCOL.md, "Volume specification"). */
export interface VolumeSpec {
  type: 'host';
  /** Only set to update an existing volume. */
  id: string;
  name: string;
  namespace: string;
  /** `default` when a new volume's spec names none (as Nomad's servers do); `''` on an update: keep the volume's plugin. */
  pluginId: string;
  nodeId: string;
  nodePool: string;
  capacityMinBytes: bigint;
  capacityMaxBytes: bigint;
  /** Registration only: the capacity of the existing volume. */
  capacityBytes: bigint;
  /** Registration only: where the existing volume lives. */
  hostPath: string;
  parameters: Record<string, string> | null;
  capabilities: Capability[];
  constraints: Constraint[];
  /** What the user should know that Nomad would not refuse: a name with control characters, an unquoted octal number. */
  warnings?: string[];
}

export type SpecPurpose = 'create' | 'register';

/**
 * The kernel's limit on one environment string (MAX_ARG_STRLEN, 32 pages), `NAME=value`
 * and its NUL included. A field the agent passes to a plugin's environment must fit, or
 * no plugin can be started with it (`spawn E2BIG`).
 */
export const MAX_ENV_STRING_BYTES = 32 * 4096;

/** Reads a spec file (or stdin for `-`) in HCL or JSON and validates it; throws SPEC_INVALID naming every bad field. */
export async function readVolumeSpec(
  file: string,
  purpose: SpecPurpose,
  stdin?: NodeJS.ReadableStream,
): Promise<VolumeSpec> {
  let text: string;
  try {
    text = await readSource(file, stdin);
  } catch (err) {
    throw new AgentError('SPEC_INVALID', (err as Error).message, { file, problems: [(err as Error).message] });
  }
  return volumeSpecFromText(text, purpose, file);
}

/**
 * Decodes a spec exactly as `nomad volume create` does (HCL 1 or its JSON reader,
 * mapstructure's weak typing: `uid = 1000` is `"1000"`, `true` is `"1"`) and checks it as
 * Nomad's servers do (HostVolume.Validate), every problem at once in Nomad's words.
 * Warnings (an unquoted `0755` read as 493, a misspelt key Nomad ignores) are kept on
 * success and shown with the error on failure.
 */
export function volumeSpecFromText(text: string, purpose: SpecPurpose, file = '<spec>'): VolumeSpec {
  const shown = file === '-' ? '<stdin>' : file;
  const depth = nestingDepth(text, text.trimStart().startsWith('{'));
  if (depth > MAX_DOCUMENT_DEPTH) {
    const message = `${shown} is nested more than ${MAX_DOCUMENT_DEPTH} levels deep: dhv refuses it before parsing\nA volume spec needs three levels at most.`;
    throw new AgentError('SPEC_INVALID', message, { file, problems: [message] });
  }
  const warnings = specWarnings(text);
  const fail = (lines: string[], hint: string, problems = lines): never => {
    const shownWarnings = warnings.map((w) => `\nWarning: ${w}`).join('');
    const text = lines.length === 1 || problems !== lines ? lines.join('\n') : goMultiError(lines);
    throw new AgentError('SPEC_INVALID', `${text}\n${hint}${shownWarnings}`, {
      file,
      problems,
      warnings,
    });
  };
  let vol: ApiHostVolume;
  try {
    vol = decodeVolumeSpecAsNomad(text);
  } catch (err) {
    if (!(err instanceof SpecRefused)) throw err;
    if (err.stage === 'csi')
      fail(
        ['unknown volume type: csi (dhv simulates dynamic host volumes: set type = "host")'],
        `Fix the volume specification ${shown}.`,
      );
    const missingType = err.stage === 'type' && err.message === 'Error unknown volume type: ';
    fail(
      [err.message],
      missingType
        ? `The spec has no type: add type = "host" to ${shown} (nomad volume create stops here too).`
        : `Fix the volume specification ${shown}: nomad volume create stops here too.`,
    );
    throw err;
  }
  // Nomad's servers refuse with Validate's problems behind their prefix; what dhv adds comes below.
  const serverProblems = validateHostVolume(vol);
  const problems = [...serverProblems, ...negativeCapacities(vol)];
  if (purpose === 'register' && vol.HostPath === '')
    problems.push('missing host_path: a registered volume must say where it already lives');
  if (purpose === 'register' && vol.HostPath !== '' && !vol.HostPath.startsWith('/'))
    problems.push(`host_path must be an absolute path, got ${JSON.stringify(vol.HostPath)}`);
  const spec: VolumeSpec = {
    type: 'host',
    id: vol.ID,
    name: vol.Name,
    namespace: vol.Namespace || 'default',
    pluginId: vol.PluginID || (vol.ID === '' && purpose === 'create' ? DEFAULT_PLUGIN_ID : ''),
    nodeId: vol.NodeID,
    nodePool: vol.NodePool,
    capacityMinBytes: vol.RequestedCapacityMinBytes,
    capacityMaxBytes: vol.RequestedCapacityMaxBytes,
    capacityBytes: vol.CapacityBytes,
    hostPath: vol.HostPath,
    // The volume reaches the servers as JSON with `Parameters` omitted when empty: `{}` arrives as none.
    parameters: vol.Parameters && Object.keys(vol.Parameters).length > 0 ? vol.Parameters : null,
    // Nomad's servers give a volume without capability blocks one single-node-writer file-system capability.
    capabilities:
      vol.RequestedCapabilities && vol.RequestedCapabilities.length > 0
        ? vol.RequestedCapabilities.map((c) => ({
            accessMode: c.AccessMode as AccessMode,
            attachmentMode: c.AttachmentMode as AttachmentMode,
          }))
        : [{ accessMode: 'single-node-writer', attachmentMode: 'file-system' }],
    constraints: (vol.Constraints ?? []).map((c) => ({ attribute: c.LTarget, operator: c.Operand, value: c.RTarget })),
    warnings: [...warnings, ...nameWarnings(vol.Name)],
  };
  problems.push(...environmentLimits(spec));
  if (problems.length > 0) {
    const own = problems.slice(serverProblems.length);
    const message =
      serverProblems.length > 0 ? [hostVolumeValidationError(serverProblems).trimEnd(), ...own] : problems;
    fail(
      message,
      [...capacityHints(vol), `Fix the volume specification ${shown}; every problem is listed above.`].join('\n'),
      problems,
    );
  }
  return spec;
}

/** What to do about a capacity problem whose cause is not in Nomad's words: a capacity_max left out reads as 0. */
function capacityHints(vol: ApiHostVolume): string[] {
  if (vol.RequestedCapacityMaxBytes === 0n && vol.RequestedCapacityMinBytes > 0n)
    return [
      'capacity_min is set without capacity_max, which Nomad then reads as 0: add capacity_max (at least capacity_min), or leave capacity_min out.',
    ];
  return [];
}

/** volumeSpecFromText for a spec given as a plain object (tests, programs): read as the JSON document it is. */
export function validateVolumeSpec(doc: Record<string, unknown>, purpose: SpecPurpose, file = '<spec>'): VolumeSpec {
  return volumeSpecFromText(encodeJson(doc), purpose, file);
}

/** How Nomad prints its servers' validation errors: one alone, several as go-multierror does (less its closing blank line: a hint follows). */
export function goMultiError(problems: readonly string[]): string {
  if (problems.length === 1) return problems[0]!;
  return multierrorText(problems).slice(0, -'\n\n'.length);
}

/**
 * go-humanize reads a size through a float64 and Nomad keeps it in an int64, so 8 EiB
 * and more (and `9223372036854775807` itself, which is 2^63 as a float64) wrap to a
 * negative size that a real agent passes to the plugin. dhv refuses it (docs/nomad-differences.md).
 */
function negativeCapacities(vol: ApiHostVolume): string[] {
  const fields = [
    ['capacity_min', vol.RequestedCapacityMinBytes],
    ['capacity_max', vol.RequestedCapacityMaxBytes],
    ['capacity', vol.CapacityBytes],
  ] as const;
  return fields
    .filter(([, bytes]) => bytes < 0n)
    .map(
      ([key, bytes]) =>
        `${key} is ${bytes} to Nomad: its size reader goes through a float64 into an int64, which wraps sizes of 2^63 bytes (8 EiB) and more to negative numbers, and a real agent passes them to the plugin; dhv refuses it: give at most 9223372036854774784 bytes (8 EiB less 1 KiB)`,
    );
}

/** Fields that reach a plugin's environment must each fit in one environment string. */
function environmentLimits(spec: VolumeSpec): string[] {
  const problems: string[] = [];
  const check = (field: string, variable: string, value: string) => {
    const bytes = Buffer.byteLength(variable) + 1 + Buffer.byteLength(value) + 1;
    if (bytes > MAX_ENV_STRING_BYTES) {
      problems.push(
        `${field} is too large: ${variable} would be ${bytes} bytes, and the kernel starts no program with an environment string over ${MAX_ENV_STRING_BYTES} bytes (MAX_ARG_STRLEN)`,
      );
    }
    if (value.includes('\0'))
      problems.push(`${field} holds a NUL byte, which no environment variable can carry (${variable})`);
  };
  check('name', 'DHV_VOLUME_NAME', spec.name);
  check('namespace', 'DHV_NAMESPACE', spec.namespace);
  if (spec.parameters) check('parameters', 'DHV_PARAMETERS', goMarshalStringMap(spec.parameters));
  return problems;
}

/**
 * Names Nomad's servers accept (they only refuse an empty one) but that a person will
 * regret: said as a warning, since a real cluster would take them too.
 */
export function nameWarnings(name: string): string[] {
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) {
    return [
      `the volume name ${JSON.stringify(name)} holds control characters: Nomad's servers accept it, but a job's volume block must then spell them exactly, and dhv prints them escaped`,
    ];
  }
  if (name.trim() === '' && name !== '')
    return [
      `the volume name ${JSON.stringify(name)} is only white space: Nomad's servers accept it, but nobody will find it in a list`,
    ];
  return [];
}
