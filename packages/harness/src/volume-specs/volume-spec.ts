import { isUuid, parseSize } from '@dhv/sdk';
import { AgentError } from '../errors/agent-error.js';
import { blocks, parseHclOrJson, readSource } from '../config/read-document.js';

export const ACCESS_MODES = ['single-node-reader-only', 'single-node-writer', 'single-node-single-writer', 'single-node-multi-writer'] as const;
export const ATTACHMENT_MODES = ['file-system', 'block-device'] as const;
export type AccessMode = (typeof ACCESS_MODES)[number];
export type AttachmentMode = (typeof ATTACHMENT_MODES)[number];

export interface Capability {
  accessMode: AccessMode;
  attachmentMode: AttachmentMode;
}

export interface Constraint {
  attribute: string;
  operator: string;
  value: string;
}

/** A volume specification as `nomad volume create` / `register` reads it (PROTOCOL.md, "Volume specification"). */
export interface VolumeSpec {
  type: 'host';
  /** Only set to update an existing volume. */
  id: string;
  name: string;
  namespace: string;
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
}

export type SpecPurpose = 'create' | 'register';

/** Constraint operators that only make sense across nodes; Nomad refuses them for host volumes. */
const REFUSED_OPERATORS = ['distinct_hosts', 'distinct_property'];

/** Reads a spec file (or stdin for `-`) in HCL or JSON and validates it; throws SPEC_INVALID naming every bad field. */
export async function readVolumeSpec(file: string, purpose: SpecPurpose, stdin?: NodeJS.ReadableStream): Promise<VolumeSpec> {
  let doc: Record<string, unknown>;
  try {
    doc = await parseHclOrJson(await readSource(file, stdin), file);
  } catch (err) {
    throw new AgentError('SPEC_INVALID', (err as Error).message, { file, problems: [(err as Error).message] });
  }
  return validateVolumeSpec(doc, purpose, file);
}

export function validateVolumeSpec(doc: Record<string, unknown>, purpose: SpecPurpose, file = '<spec>'): VolumeSpec {
  const problems: string[] = [];
  const str = (key: string, fallback = ''): string => {
    const value = doc[key];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'string') {
      problems.push(`${key}: must be a string, got ${JSON.stringify(value)}`);
      return fallback;
    }
    return value;
  };
  const size = (key: string): bigint => {
    const value = doc[key];
    if (value === undefined || value === null || value === '') return 0n;
    if (typeof value !== 'string' && typeof value !== 'number') {
      problems.push(`${key}: must be a size like "50MB" or "100GiB"`);
      return 0n;
    }
    try {
      return parseSize(String(value));
    } catch (err) {
      problems.push(`${key}: ${(err as Error).message}`);
      return 0n;
    }
  };

  const type = str('type');
  if (type === '') problems.push('type: missing; set type = "host"');
  else if (type !== 'host') problems.push(`type: must be "host" for a dynamic host volume, got ${JSON.stringify(type)}`);
  const name = str('name');
  if (name === '') problems.push('name: missing; every volume needs a name');
  const id = str('id');
  if (id !== '' && !isUuid(id)) problems.push(`id: ${JSON.stringify(id)} is not a UUID (36 characters, 8-4-4-4-12 hex digits)`);
  const pluginId = str('plugin_id');
  if (purpose === 'create' && pluginId === '') problems.push('plugin_id: missing; name the plugin that creates the volume (for example "mkdir")');
  const hostPath = str('host_path');
  if (purpose === 'register' && hostPath === '') problems.push('host_path: missing; a registered volume must say where it already lives');
  if (purpose === 'register' && hostPath !== '' && !hostPath.startsWith('/')) problems.push(`host_path: must be an absolute path, got ${JSON.stringify(hostPath)}`);
  const capacityMinBytes = size('capacity_min');
  const capacityMaxBytes = size('capacity_max');
  if (capacityMaxBytes !== 0n && capacityMaxBytes < capacityMinBytes) {
    problems.push(`capacity_max: ${capacityMaxBytes} bytes is smaller than capacity_min (${capacityMinBytes} bytes)`);
  }
  const capacityBytes = size('capacity');

  const spec: VolumeSpec = {
    type: 'host',
    id,
    name,
    namespace: str('namespace', 'default') || 'default',
    pluginId,
    nodeId: str('node_id'),
    nodePool: str('node_pool'),
    capacityMinBytes,
    capacityMaxBytes,
    capacityBytes,
    hostPath,
    parameters: readParameters(doc.parameters, problems),
    capabilities: readCapabilities(doc.capability, problems),
    constraints: readConstraints(doc.constraint, problems),
  };
  if (problems.length > 0) {
    throw new AgentError('SPEC_INVALID', `invalid volume specification ${file}:\n  * ${problems.join('\n  * ')}`, { file, problems });
  }
  return spec;
}

/** `parameters { k = "v" }` (a block, so an array in HCL) or `parameters = { ... }`; values must be strings. */
function readParameters(value: unknown, problems: string[]): Record<string, string> | null {
  const list = blocks(value);
  if (list.length === 0) return null;
  const out: Record<string, string> = {};
  for (const body of list) {
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      problems.push('parameters: must be a map of strings');
      continue;
    }
    for (const [k, v] of Object.entries(body)) {
      if (typeof v === 'string') out[k] = v;
      else problems.push(`parameters.${k}: must be a string, got ${JSON.stringify(v)}`);
    }
  }
  return out;
}

function readCapabilities(value: unknown, problems: string[]): Capability[] {
  const list = blocks(value);
  // Nomad's CLI gives a volume without capability blocks one single-node-writer file-system capability.
  if (list.length === 0) return [{ accessMode: 'single-node-writer', attachmentMode: 'file-system' }];
  const out: Capability[] = [];
  list.forEach((body, i) => {
    const b = (body ?? {}) as Record<string, unknown>;
    const where = `capability[${i}]`;
    const accessMode = b.access_mode;
    const attachmentMode = b.attachment_mode;
    let ok = true;
    if (!ACCESS_MODES.includes(accessMode as AccessMode)) {
      problems.push(`${where}.access_mode: ${JSON.stringify(accessMode ?? '')} is not one of ${ACCESS_MODES.join(', ')}`);
      ok = false;
    }
    if (!ATTACHMENT_MODES.includes(attachmentMode as AttachmentMode)) {
      problems.push(`${where}.attachment_mode: ${JSON.stringify(attachmentMode ?? '')} is not one of ${ATTACHMENT_MODES.join(', ')}`);
      ok = false;
    }
    if (ok) out.push({ accessMode: accessMode as AccessMode, attachmentMode: attachmentMode as AttachmentMode });
  });
  return out;
}

function readConstraints(value: unknown, problems: string[]): Constraint[] {
  const out: Constraint[] = [];
  blocks(value).forEach((body, i) => {
    const b = (body ?? {}) as Record<string, unknown>;
    const where = `constraint[${i}]`;
    const field = (key: string) => (b[key] === undefined ? '' : String(b[key]));
    const operator = field('operator') || '=';
    if (REFUSED_OPERATORS.includes(operator)) {
      problems.push(`${where}.operator: "${operator}" is not supported for host volumes (a volume lives on one node)`);
      return;
    }
    if (field('attribute') === '' && field('value') === '') {
      problems.push(`${where}: needs an attribute or a value`);
      return;
    }
    out.push({ attribute: field('attribute'), operator, value: field('value') });
  });
  return out;
}
