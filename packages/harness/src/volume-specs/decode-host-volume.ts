import { goParseBytes } from '@dhv/sdk';
import * as hcl1 from '../go/hcl1/index.js';
import { multierrorText } from '../go/multierror.js';
import { goParseBool } from '@dhv/sdk/client';

type GoValue = hcl1.GoValue;
type GoMap = hcl1.GoMap;

/** One constraint as `api.Constraint` holds it. */
export interface ApiConstraint {
  LTarget: string;
  RTarget: string;
  Operand: string;
}

export interface ApiCapability {
  AttachmentMode: string;
  AccessMode: string;
}

/** `api.HostVolume` as Nomad's CLI decodes a spec into it (Go's field names). */
export interface ApiHostVolume {
  ID: string;
  Name: string;
  Namespace: string;
  PluginID: string;
  NodePool: string;
  NodeID: string;
  Constraints: ApiConstraint[] | null;
  RequestedCapabilities: ApiCapability[] | null;
  RequestedCapacityMinBytes: bigint;
  RequestedCapacityMaxBytes: bigint;
  CapacityBytes: bigint;
  Parameters: Record<string, string> | null;
  HostPath: string;
}

/** Where Nomad's CLI stopped with a spec, and the line it prints. */
export class SpecRefused extends Error {
  constructor(
    readonly stage: 'parse' | 'dispatch' | 'type' | 'csi' | 'decode',
    message: string,
  ) {
    super(message);
    this.name = 'SpecRefused';
  }
}

/**
 * What `nomad volume create FILE` does before it talks to a server: parseVolumeType
 * (HCL 1 parse, read `type`), the dispatch on `type`, then decodeHostVolume.
 * Returns the decoded volume or throws SpecRefused with the CLI's own line.
 */
export function decodeVolumeSpecAsNomad(text: string): ApiHostVolume {
  let list: hcl1.ObjectList;
  try {
    list = hcl1.parseHcl1(text);
  } catch (err) {
    throw new SpecRefused('parse', `Error parsing the volume type: parse error: ${(err as Error).message}`);
  }
  let type: string;
  try {
    type = dispatchType(list);
  } catch (err) {
    throw new SpecRefused('dispatch', `Error parsing the volume type: dispatch error: ${(err as Error).message}`);
  }
  const lower = type.toLowerCase();
  if (lower === 'csi') throw new SpecRefused('csi', 'type = "csi"');
  if (lower !== 'host') throw new SpecRefused('type', `Error unknown volume type: ${type}`);
  try {
    return decodeHostVolume(list);
  } catch (err) {
    throw new SpecRefused('decode', `Error decoding the volume definition: ${(err as Error).message}`);
  }
}

/** hcl.DecodeObject into `struct { T string hcl:"type" }`: every `type` item (any case) decoded as a string, the last wins. */
function dispatchType(list: hcl1.ObjectList): string {
  let type = '';
  const matches = hcl1.filterItems(list, 'type');
  for (const item of matches.items) {
    if (item.keys.length > 0) continue;
    const val = item.val;
    if (val.kind !== 'literal') {
      const pos = hcl1.nodePos(val);
      throw new Error(`At ${pos.line}:${pos.column}: root.type: unknown type for string ${hcl1.goNodeType(val)}`);
    }
    const t = val.token;
    type = t.type === 'STRING' || t.type === 'HEREDOC' ? hcl1.literalString(t) : t.text;
  }
  return type;
}

const STRING_FIELDS = [
  ['id', 'ID'],
  ['name', 'Name'],
  ['namespace', 'Namespace'],
  ['plugin_id', 'PluginID'],
  ['node_pool', 'NodePool'],
  ['node_id', 'NodeID'],
  ['host_path', 'HostPath'],
] as const;

/** command/volume_create_host.go decodeHostVolume. */
function decodeHostVolume(list: hcl1.ObjectList): ApiHostVolume {
  const m = hcl1.decodeObjectList(list);
  for (const key of ['capability', 'constraint', 'capacity', 'capacity_max', 'capacity_min', 'type']) m.delete(key);
  const errors: string[] = [];
  const vol: ApiHostVolume = {
    ID: '',
    Name: '',
    Namespace: '',
    PluginID: '',
    NodePool: '',
    NodeID: '',
    Constraints: null,
    RequestedCapabilities: null,
    RequestedCapacityMinBytes: 0n,
    RequestedCapacityMaxBytes: 0n,
    CapacityBytes: 0n,
    Parameters: null,
    HostPath: '',
  };
  for (const [key, field] of STRING_FIELDS) {
    const value = mapField(m, key);
    if (value === undefined) continue;
    const s = weakString(key, value, errors);
    if (s !== undefined) vol[field] = s;
  }
  const params = mapField(m, 'parameters');
  if (params !== undefined) vol.Parameters = weakStringMap('Parameters', params, errors);
  if (errors.length > 0) throw new Error(mapstructureErrors(errors));

  const capacity = (key: string) => {
    try {
      return parseCapacityBytes(hcl1.filterItems(list, key));
    } catch (err) {
      throw new Error(`invalid ${key}: ${(err as Error).message}`, { cause: err });
    }
  };
  vol.CapacityBytes = capacity('capacity');
  vol.RequestedCapacityMinBytes = capacity('capacity_min');
  vol.RequestedCapacityMaxBytes = capacity('capacity_max');

  const constraints = parseBlocks(list, 'constraint', parseConstraints);
  if (constraints) vol.Constraints = constraints;
  const capabilities = parseBlocks(list, 'capability', parseCapabilities);
  if (capabilities) vol.RequestedCapabilities = capabilities;
  return vol;
}

/** The spec's `constraint` or `capability` blocks read by `parse`, none when there are none; an error names the block. */
function parseBlocks<T>(
  list: hcl1.ObjectList,
  block: 'constraint' | 'capability',
  parse: (items: hcl1.ObjectList) => T,
): T | undefined {
  const items = hcl1.filterItems(list, block);
  if (items.items.length === 0) return undefined;
  try {
    return parse(items);
  } catch (err) {
    throw new Error(`invalid ${block}: ${(err as Error).message}`, { cause: err });
  }
}

/** mapstructure's field lookup: the key exactly, else the first key equal to it ignoring case. */
function mapField(m: GoMap, key: string): GoValue | undefined {
  if (m.has(key)) return m.get(key);
  for (const [k, v] of m) if (k.toLowerCase() === key.toLowerCase()) return v;
  return undefined;
}

/** parseCapacityBytes: the first `key = literal` item's own text (quotes trimmed) through go-humanize; a block is 0. */
function parseCapacityBytes(items: hcl1.ObjectList): bigint {
  for (const item of hcl1.elemItems(items).items) {
    if (item.val.kind !== 'literal') break;
    const literal = item.val.token.text.replace(/^"+|"+$/g, '');
    if (literal === '') return 0n;
    let bytes: bigint;
    try {
      bytes = goParseBytes(literal);
    } catch (err) {
      throw new Error(`could not parse value as bytes: ${(err as Error).message}`, { cause: err });
    }
    return BigInt.asIntN(64, bytes);
  }
  return 0n;
}

/** mapstructure's weak decoding of one value into a Go string. */
function weakString(name: string, value: GoValue, errors: string[]): string | undefined {
  switch (value.kind) {
    case 'string':
      return value.value;
    case 'bool':
      return value.value ? '1' : '0';
    case 'int':
      return value.value.toString();
    case 'float':
      return goFormatFloat(value.value);
    default:
      errors.push(`'${name}' expected type 'string', got unconvertible type '${goTypeName(value)}'`);
      return undefined;
  }
}

/**
 * Into `map[string]string`: a list of maps (blocks) merges in order, later keys winning.
 * Built as a Map and made an object by definition, so every key, `__proto__` included, is its own.
 */
function weakStringMap(name: string, value: GoValue, errors: string[]): Record<string, string> | null {
  const out = new Map<string, string>();
  const add = (prefix: string, map: GoMap) => {
    for (const [k, v] of map) {
      const s = weakString(`${prefix}[${k}]`, v, errors);
      if (s !== undefined) out.set(k, s);
    }
  };
  if (value.kind === 'maps') value.items.forEach((map, i) => add(`${name}[${i}]`, map));
  else if (value.kind === 'map') add(name, value.map);
  else if (!(value.kind === 'list' && value.items.length === 0))
    errors.push(`'${name}' expected a map, got '${goKindName(value)}'`);
  return Object.fromEntries(out);
}

function mapstructureErrors(errors: string[]): string {
  return `decoding failed due to the following error(s):\n\n${errors.join('\n')}`;
}

function goTypeName(value: GoValue): string {
  switch (value.kind) {
    case 'list':
      return '[]interface {}';
    case 'maps':
      return '[]map[string]interface {}';
    case 'map':
      return 'map[string]interface {}';
    case 'int':
      return 'int';
    case 'float':
      return 'float64';
    default:
      return value.kind;
  }
}

function goKindName(value: GoValue): string {
  return value.kind === 'list' || value.kind === 'maps' ? 'slice' : goTypeName(value);
}

/** strconv.FormatFloat(f, 'f', -1, 64): the shortest digits that read back, never an exponent. */
export function goFormatFloat(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
  const text = String(n);
  const match = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!match) return text;
  const [, sign, whole, fraction = '', exponent] = match;
  const digits = `${whole}${fraction}`;
  const point = whole!.length + Number(exponent);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** helper.CheckHCLKeys: every key of the block must be one of `valid` (go-multierror's text). */
function checkKeys(node: hcl1.Node, valid: readonly string[]): void {
  let list: hcl1.ObjectList;
  if (node.kind === 'objectList') list = node;
  else if (node.kind === 'object') list = node.list;
  else throw new Error(`cannot check HCL keys of type ${hcl1.goNodeType(node)}`);
  const bad = list.items.map((i) => i.keys[0]!.value).filter((k) => !valid.includes(k));
  if (bad.length > 0) {
    throw new Error(multierrorText(bad.map((k) => `invalid key: ${k}`)));
  }
}

function decodeBlock(node: hcl1.Node): GoMap {
  const list: hcl1.ObjectList = node.kind === 'object' ? node.list : (node as hcl1.ObjectList);
  return hcl1.decodeObjectList(list);
}

function parseCapabilities(list: hcl1.ObjectList): ApiCapability[] {
  const out: ApiCapability[] = [];
  for (const item of hcl1.elemItems(list).items) {
    checkKeys(item.val, ['access_mode', 'attachment_mode']);
    if (item.val.kind !== 'object') break;
    const m = decodeBlock(item.val);
    const errors: string[] = [];
    const field = (key: string) => {
      const v = mapField(m, key);
      return v === undefined ? '' : (weakString(key, v, errors) ?? '');
    };
    const cap = { AttachmentMode: field('attachment_mode'), AccessMode: field('access_mode') };
    if (errors.length > 0) throw new Error(mapstructureErrors(errors));
    out.push(cap);
  }
  return out;
}

const CONSTRAINT_KEYS = [
  'attribute',
  'distinct_hosts',
  'distinct_property',
  'operator',
  'regexp',
  'set_contains',
  'value',
  'version',
  'semver',
] as const;

function parseConstraints(list: hcl1.ObjectList): ApiConstraint[] {
  const out: ApiConstraint[] = [];
  for (const item of hcl1.elemItems(list).items) {
    checkKeys(item.val, CONSTRAINT_KEYS);
    const m = decodeBlock(item.val);
    let ltarget = m.get('attribute');
    let rtarget = m.get('value');
    let operand = m.get('operator');
    for (const shorthand of ['version', 'semver', 'regexp', 'set_contains']) {
      const v = m.get(shorthand);
      if (v !== undefined) {
        operand = { kind: 'string', value: shorthand };
        rtarget = v;
      }
    }
    const distinctHosts = m.get('distinct_hosts');
    if (distinctHosts !== undefined) {
      const enabled = parseDistinctHosts(distinctHosts);
      if (!enabled) continue;
      operand = { kind: 'string', value: 'distinct_hosts' };
      rtarget = { kind: 'string', value: 'true' };
    }
    const distinctProperty = m.get('distinct_property');
    if (distinctProperty !== undefined) {
      operand = { kind: 'string', value: 'distinct_property' };
      ltarget = distinctProperty;
    }
    const errors: string[] = [];
    const str = (name: string, v: GoValue | undefined) => (v === undefined ? '' : (weakString(name, v, errors) ?? ''));
    const c = { LTarget: str('LTarget', ltarget), RTarget: str('RTarget', rtarget), Operand: str('Operand', operand) };
    if (errors.length > 0) throw new Error(mapstructureErrors(errors));
    if (c.Operand === '') c.Operand = '=';
    out.push(c);
  }
  return out;
}

/** command/volume_create_host.go parseBool: a bool, or a string through strconv.ParseBool. */
function parseDistinctHosts(value: GoValue): boolean {
  if (value.kind === 'bool') return value.value;
  if (value.kind === 'string') {
    const parsed = goParseBool(value.value);
    if (!parsed.ok) throw new Error(`distinct_hosts should be set to true or false; ${parsed.error}`);
    return parsed.value;
  }
  const shown =
    value.kind === 'int' ? value.value.toString() : value.kind === 'float' ? goFormatFloat(value.value) : '[...]';
  throw new Error(`distinct_hosts should be set to true or false; ${shown} couldn't be converted to boolean value`);
}
