import { isUuid, parseSize } from '@dhv/sdk';
import { goMarshalStringMap } from '@dhv/sdk/client';
import { AgentError } from '../errors/agent-error.js';
import { blocks, isBody, parseDocumentWithNotes, readSource } from '../config/read-document.js';
import { goString } from './weak-decode.js';

export const ACCESS_MODES = [
  'single-node-reader-only',
  'single-node-writer',
  'single-node-single-writer',
  'single-node-multi-writer',
] as const;
export const ATTACHMENT_MODES = ['file-system', 'block-device'] as const;
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
  let parsed: { doc: Record<string, unknown>; notes: string[] };
  try {
    parsed = await parseDocumentWithNotes(await readSource(file, stdin), file);
  } catch (err) {
    throw new AgentError('SPEC_INVALID', (err as Error).message, { file, problems: [(err as Error).message] });
  }
  const spec = validateVolumeSpec(parsed.doc, purpose, file);
  return { ...spec, warnings: [...parsed.notes, ...(spec.warnings ?? [])] };
}

/**
 * Decodes a spec as Nomad's CLI does (values weakly typed: `uid = 1000` is `"1000"`, `true`
 * is `"1"`; `type` in any case; unknown keys ignored) and checks it as Nomad's servers do
 * (HostVolume.Validate), reporting every problem at once in Nomad's words.
 */
export function validateVolumeSpec(doc: Record<string, unknown>, purpose: SpecPurpose, file = '<spec>'): VolumeSpec {
  const problems: string[] = [];
  const str = (key: string, fallback = ''): string => {
    const value = doc[key];
    if (value === undefined || value === null) return fallback;
    const decoded = goString(value);
    if (!decoded.ok) {
      problems.push(`'${key}' ${decoded.error}`);
      return fallback;
    }
    return decoded.value;
  };
  const size = (key: string): bigint => {
    const value = doc[key];
    if (value === undefined || value === null || value === '') return 0n;
    if (typeof value !== 'string' && typeof value !== 'number') {
      problems.push(`invalid ${key}: must be a size like "50MB" or "100GiB"`);
      return 0n;
    }
    try {
      return parseSize(String(value));
    } catch (err) {
      problems.push(`invalid ${key}: ${(err as Error).message}`);
      return 0n;
    }
  };

  const type = str('type');
  if (type.toLowerCase() !== 'host') {
    problems.push(
      type.toLowerCase() === 'csi'
        ? 'unknown volume type: csi (dhv simulates dynamic host volumes: set type = "host")'
        : `unknown volume type: ${type}`,
    );
  }
  const id = str('id');
  if (id !== '' && !isUuid(id)) problems.push(`invalid ID ${JSON.stringify(id)}`);
  const name = str('name');
  if (name === '') problems.push('missing name');
  const namespace = str('namespace', 'default') || 'default';
  const pluginId = str('plugin_id') || (id === '' && purpose === 'create' ? DEFAULT_PLUGIN_ID : '');
  const hostPath = str('host_path');
  if (purpose === 'register' && hostPath === '')
    problems.push('missing host_path: a registered volume must say where it already lives');
  if (purpose === 'register' && hostPath !== '' && !hostPath.startsWith('/'))
    problems.push(`host_path must be an absolute path, got ${JSON.stringify(hostPath)}`);
  const capacityMinBytes = size('capacity_min');
  const capacityMaxBytes = size('capacity_max');
  if (capacityMaxBytes < capacityMinBytes) {
    problems.push(`capacity_max (${capacityMaxBytes}) must be larger than capacity_min (${capacityMinBytes})`);
  }
  const capacityBytes = size('capacity');
  const parameters = readParameters(doc.parameters, problems);

  const spec: VolumeSpec = {
    type: 'host',
    id,
    name,
    namespace,
    pluginId,
    nodeId: str('node_id'),
    nodePool: str('node_pool'),
    capacityMinBytes,
    capacityMaxBytes,
    capacityBytes,
    hostPath,
    parameters,
    capabilities: readCapabilities(doc.capability, problems),
    constraints: readConstraints(doc.constraint, problems),
    warnings: nameWarnings(name),
  };
  problems.push(...environmentLimits(spec));
  if (problems.length > 0) {
    const shown = file === '-' ? '<stdin>' : file;
    throw new AgentError(
      'SPEC_INVALID',
      `${goMultiError(problems)}\nFix the volume specification ${shown}; every problem is listed above.`,
      { file, problems },
    );
  }
  return spec;
}

/** How Nomad prints its servers' validation errors: one alone, several as go-multierror does. */
export function goMultiError(problems: readonly string[]): string {
  if (problems.length === 1) return problems[0]!;
  return `${problems.length} errors occurred:\n${problems.map((p) => `\t* ${p}`).join('\n')}`;
}

/**
 * `parameters { k = "v" }` (a block, so a list of bodies in HCL, merged) or
 * `parameters = { ... }`; values decoded weakly, as mapstructure does for Nomad's CLI.
 */
function readParameters(value: unknown, problems: string[]): Record<string, string> | null {
  const list = blocks(value);
  if (list.length === 0) return null;
  const out: Record<string, string> = {};
  for (const body of list) {
    if (!isBody(body)) {
      problems.push(`'parameters' expected a map, got ${Array.isArray(body) ? 'a list' : typeof body}`);
      continue;
    }
    for (const [k, v] of Object.entries(body)) {
      const decoded = goString(v);
      if (decoded.ok) out[k] = decoded.value;
      else problems.push(`'parameters[${k}]' ${decoded.error}`);
    }
  }
  return out;
}

function readCapabilities(value: unknown, problems: string[]): Capability[] {
  const list = blocks(value);
  // Nomad's servers give a volume without capability blocks one single-node-writer file-system capability.
  if (list.length === 0) return [{ accessMode: 'single-node-writer', attachmentMode: 'file-system' }];
  const out: Capability[] = [];
  for (const body of list) {
    const b = isBody(body) ? body : {};
    const access = goString(b.access_mode ?? '');
    const attachment = goString(b.attachment_mode ?? '');
    const accessMode = access.ok ? access.value : '';
    const attachmentMode = attachment.ok ? attachment.value : '';
    // HostVolumeCapability.Validate: the attachment mode is checked first, and only the first problem is told.
    if (!ATTACHMENT_MODES.includes(attachmentMode as AttachmentMode))
      problems.push(`invalid attachment mode: ${JSON.stringify(attachmentMode)}`);
    else if (!ACCESS_MODES.includes(accessMode as AccessMode))
      problems.push(`invalid access mode: ${JSON.stringify(accessMode)}`);
    else out.push({ accessMode: accessMode as AccessMode, attachmentMode: attachmentMode as AttachmentMode });
  }
  return out;
}

/** The shorthand keys Nomad's CLI turns into an operator with the key's value as RTarget. */
const SHORTHAND_OPERATORS = ['version', 'semver', 'regexp', 'set_contains'] as const;

function readConstraints(value: unknown, problems: string[]): Constraint[] {
  const out: Constraint[] = [];
  for (const body of blocks(value)) {
    const b = isBody(body) ? body : {};
    const field = (key: string) => {
      const decoded = goString(b[key] ?? '');
      return decoded.ok ? decoded.value : '';
    };
    let attribute = field('attribute');
    let operator = field('operator');
    let target = field('value');
    for (const key of SHORTHAND_OPERATORS) {
      if (b[key] !== undefined) {
        operator = key;
        target = field(key);
      }
    }
    if (b.distinct_hosts !== undefined) {
      const enabled = field('distinct_hosts');
      if (!['true', '1', 't', 'T', 'TRUE', 'True'].includes(enabled)) {
        if (!['false', '0', 'f', 'F', 'FALSE', 'False'].includes(enabled))
          problems.push(
            `invalid constraint: distinct_hosts should be set to true or false; strconv.ParseBool: parsing ${JSON.stringify(enabled)}: invalid syntax`,
          );
        continue;
      }
      operator = 'distinct_hosts';
      target = 'true';
    }
    if (b.distinct_property !== undefined) {
      operator = 'distinct_property';
      attribute = field('distinct_property');
    }
    if (operator === '') operator = '=';
    const constraint = { attribute, operator, value: target };
    const invalid = constraintProblems(constraint);
    if (invalid.length > 0) problems.push(`invalid constraint: ${goMultiErrorFull(invalid)}`);
    if (operator === 'distinct_hosts' || operator === 'distinct_property') {
      problems.push(`invalid constraint ${operator}: host volumes of the same name are always on distinct hosts`);
    }
    if (invalid.length === 0) out.push(constraint);
  }
  return out;
}

/** Nomad's Constraint.Validate, in its words. */
function constraintProblems({ attribute, operator, value }: Constraint): string[] {
  const problems: string[] = [];
  let needsAttribute = true;
  switch (operator) {
    case 'distinct_hosts':
      needsAttribute = false;
      break;
    case 'set_contains':
    case 'set_contains_all':
    case 'set_contains_any':
      if (value === '') problems.push('Set contains constraint requires an RTarget');
      break;
    case 'regexp':
      try {
        new RegExp(value);
      } catch (err) {
        problems.push(`Regular expression failed to compile: ${(err as Error).message}`);
      }
      break;
    case 'version':
    case 'semver':
    case 'distinct_property':
      break;
    case 'is_set':
    case 'is_not_set':
      if (value !== '') problems.push(`Operator ${JSON.stringify(operator)} does not support an RTarget`);
      break;
    case '=':
    case '==':
    case 'is':
    case '!=':
    case 'not':
    case '<':
    case '<=':
    case '>':
    case '>=':
      if (value === '') problems.push(`Operator ${JSON.stringify(operator)} requires an RTarget`);
      break;
    default:
      problems.push(`Unknown constraint type ${JSON.stringify(operator)}`);
  }
  if (needsAttribute && attribute === '') problems.push('No LTarget provided but is required by constraint');
  return problems;
}

/** go-multierror's own format, used where Nomad prints a multierror without flattening it. */
function goMultiErrorFull(problems: readonly string[]): string {
  const head = problems.length === 1 ? '1 error occurred:' : `${problems.length} errors occurred:`;
  return `${head}\n${problems.map((p) => `\t* ${p}`).join('\n')}\n\n`;
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
