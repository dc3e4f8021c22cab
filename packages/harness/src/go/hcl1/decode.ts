import { goNodeType, nodePos, type Node, type ObjectList } from './ast.js';
import { heredocValue, unquoteGo, unquoteHcl } from './unquote.js';
import { goParseFloat, goParseInt, type GoParsed } from '@dhv/sdk/client';

/**
 * A Go value as HCL 1's DecodeObject leaves it in a `map[string]interface{}`: integers
 * are Go `int` (64 bits, kept exact as bigint), floats float64, blocks
 * `[]map[string]interface{}`, lists `[]interface{}`.
 */
export type GoValue =
  | { kind: 'string'; value: string }
  | { kind: 'int'; value: bigint }
  | { kind: 'float'; value: number }
  | { kind: 'bool'; value: boolean }
  | { kind: 'list'; items: GoValue[] }
  | { kind: 'maps'; items: GoMap[] }
  | { kind: 'map'; map: GoMap };

export type GoMap = Map<string, GoValue>;

/** An error HCL 1's decoder returns (Go's strconv texts, or `At L:C: root.x: unknown type ...`). */
export class Hcl1DecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Hcl1DecodeError';
  }
}

/** A strconv result, or its error as the decoder returns it. */
function decoded<T>(parsed: GoParsed<T>): T {
  if (!parsed.ok) throw new Hcl1DecodeError(parsed.error);
  return parsed.value;
}

/** The literal's string value (a STRING unquoted, a HEREDOC unindented). */
export function literalString(token: { type: string; text: string; json?: boolean }): string {
  if (token.type === 'HEREDOC') return heredocValue(token.text);
  return token.json ? unquoteGo(token.text) : unquoteHcl(token.text);
}

type StackKind = 'map' | 'slice';

/**
 * hcl.DecodeObject(&m, list) with `m map[string]interface{}`, as Nomad's CLI calls it.
 * A repeated key is decoded again into the value already there, with that value's Go
 * type: `size = 1` then `size = "two"` fails as ParseInt does, the last of two strings
 * wins, repeated blocks append.
 */
export function decodeObjectList(list: ObjectList): GoMap {
  const stack: StackKind[] = [];
  return decodeMap('root', list, undefined, stack);
}

function posError(node: Node, message: string): Hcl1DecodeError {
  const pos = nodePos(node);
  return new Hcl1DecodeError(`At ${pos.line}:${pos.column}: ${message}`);
}

function decodeMap(
  name: string,
  node: Node | { kind: 'item'; list: ObjectList },
  into: GoMap | undefined,
  stack: StackKind[],
): GoMap {
  let list: ObjectList;
  if (node.kind === 'item') list = node.list;
  else if (node.kind === 'object') list = node.list;
  else if (node.kind === 'objectList') list = node;
  else throw posError(node, `${name}: not an object type for map (${goNodeType(node)})`);
  stack.push('map');
  try {
    const result: GoMap = into ?? new Map();
    const done = new Set<string>();
    for (const item of list.items) {
      if (item.keys.length === 0) throw posError(list, `${name}: map must have string keys`);
      const key = item.keys[0]!.value;
      if (done.has(key)) continue;
      let val: Node = item.val;
      if (item.keys.length > 1) {
        val = filterFirstKey(list, key);
        done.add(key);
      }
      result.set(key, decodeValue(`${name}.${key}`, val, result.get(key), stack));
    }
    return result;
  } finally {
    stack.pop();
  }
}

/** list.Filter(key) exactly as decodeMap uses it (HCL 1's Filter also matches case-insensitively). */
function filterFirstKey(list: ObjectList, key: string): ObjectList {
  const items = [];
  for (const item of list.items) {
    if (item.keys.length < 1) continue;
    const k = item.keys[0]!.value;
    if (k !== key && k.toLowerCase() !== key.toLowerCase()) continue;
    items.push({ keys: item.keys.slice(1), val: item.val });
  }
  return { kind: 'objectList', items, pos: list.pos };
}

/** Decodes a node into an interface{} holding `old` (or nothing): old's Go type rules when there is one. */
function decodeValue(name: string, node: Node, old: GoValue | undefined, stack: StackKind[]): GoValue {
  if (old === undefined) return decodeInterface(name, node, stack);
  switch (old.kind) {
    case 'string':
      return { kind: 'string', value: decodeString(name, node) };
    case 'int':
      return { kind: 'int', value: decodeInt(name, node) };
    case 'float':
      return { kind: 'float', value: decodeFloat(name, node) };
    case 'bool':
      return { kind: 'bool', value: decodeBool(name, node) };
    case 'list':
      return { kind: 'list', items: [...old.items, ...(decodeSliceItems(name, node, stack, 'list') as GoValue[])] };
    case 'maps':
      return { kind: 'maps', items: [...old.items, ...decodeSliceItems(name, node, stack, 'maps')] as GoMap[] };
    case 'map':
      return { kind: 'map', map: decodeMap(name, node, old.map, stack) };
  }
}

function decodeInterface(name: string, node: Node, stack: StackKind[]): GoValue {
  const top = stack[stack.length - 1];
  switch (node.kind) {
    case 'objectList':
    case 'object':
      if (top === undefined || top === 'slice') return { kind: 'map', map: decodeMap(name, node, undefined, stack) };
      return { kind: 'maps', items: decodeSliceItems(name, node, stack, 'maps') as GoMap[] };
    case 'list':
      return { kind: 'list', items: decodeSliceItems(name, node, stack, 'list') as GoValue[] };
    case 'literal':
      switch (node.token.type) {
        case 'BOOL':
          return { kind: 'bool', value: decodeBool(name, node) };
        case 'FLOAT':
          return { kind: 'float', value: decodeFloat(name, node) };
        case 'NUMBER':
          return { kind: 'int', value: decodeInt(name, node) };
        default:
          return { kind: 'string', value: decodeString(name, node) };
      }
  }
}

function decodeSliceItems(name: string, node: Node, stack: StackKind[], elem: 'list' | 'maps'): Array<GoValue | GoMap> {
  let items: Array<Node | { kind: 'item'; list: ObjectList }>;
  if (node.kind === 'objectList')
    items = node.items.map((item) => ({
      kind: 'item' as const,
      list: { kind: 'objectList', items: [item], pos: node.pos },
    }));
  else if (node.kind === 'object') items = [node];
  else if (node.kind === 'list') items = node.items;
  else throw posError(node, `unknown slice type: ${goNodeType(node)}`);
  stack.push('slice');
  try {
    return items.map((item, i) => {
      const itemName = `${name}[${i}]`;
      if (elem === 'maps') return decodeMap(itemName, item, undefined, stack);
      if (item.kind === 'item') {
        // An object item inside an interface{} slice: decoded as a map of its one key.
        return { kind: 'map', map: decodeMap(itemName, item, undefined, stack) } as GoValue;
      }
      return decodeInterface(itemName, item, stack);
    });
  } finally {
    stack.pop();
  }
}

function decodeString(name: string, node: Node): string {
  if (node.kind === 'literal') {
    const t = node.token;
    if (t.type === 'NUMBER' || t.type === 'FLOAT' || t.type === 'BOOL') return t.text;
    return literalString(t);
  }
  throw posError(node, `${name}: unknown type for string ${goNodeType(node)}`);
}

function decodeInt(name: string, node: Node): bigint {
  if (node.kind === 'literal') {
    if (node.token.type === 'NUMBER') return decoded(goParseInt(node.token.text));
    if (node.token.type === 'STRING') return decoded(goParseInt(literalString(node.token)));
  }
  throw posError(node, `${name}: unknown type ${goNodeType(node)}`);
}

function decodeFloat(name: string, node: Node): number {
  if (node.kind === 'literal' && (node.token.type === 'FLOAT' || node.token.type === 'NUMBER'))
    return decoded(goParseFloat(node.token.text));
  throw posError(node, `${name}: unknown type ${goNodeType(node)}`);
}

function decodeBool(name: string, node: Node): boolean {
  if (node.kind === 'literal' && ['BOOL', 'STRING', 'NUMBER'].includes(node.token.type)) {
    const s = node.token.text.replaceAll('"', '').toLowerCase();
    if (s === '1' || s === 'true') return true;
    if (s === '0' || s === 'false') return false;
    throw new Hcl1DecodeError(`decodeBool: Unknown value for boolean: ${node.token.text}`);
  }
  throw posError(node, `${name}: unknown type ${goNodeType(node)}`);
}

/** A Go value as plain JavaScript: maps as objects, integers as numbers when exact (bigint past 2^53), floats as numbers. */
export function goValueToPlain(value: GoValue): unknown {
  switch (value.kind) {
    case 'string':
    case 'float':
    case 'bool':
      return value.value;
    case 'int':
      return value.value >= BigInt(Number.MIN_SAFE_INTEGER) && value.value <= BigInt(Number.MAX_SAFE_INTEGER)
        ? Number(value.value)
        : value.value;
    case 'list':
      return value.items.map(goValueToPlain);
    case 'maps':
      return value.items.map(goMapToPlain);
    case 'map':
      return goMapToPlain(value.map);
  }
}

/** Keys are defined, not assigned: a key `__proto__` is an own key like any other. */
export function goMapToPlain(map: GoMap): Record<string, unknown> {
  return Object.fromEntries([...map].map(([k, v]) => [k, goValueToPlain(v)]));
}
