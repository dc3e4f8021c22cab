import { goPrintf, goSprint, goSprintln, goTypeName as goType } from '../fmt.js';
import { ExecFailure } from './errors.js';

export const FUNCS = new Set([
  'index',
  'len',
  'printf',
  'print',
  'println',
  'eq',
  'ne',
  'lt',
  'le',
  'gt',
  'ge',
  'and',
  'or',
  'not',
]);
/** Go's other builtins and Nomad's sprig_* additions: real functions in `nomad … -t`, not implemented here. */
export const UNSUPPORTED_FUNCS = new Set(['call', 'html', 'js', 'urlquery', 'slice']);

export function truthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === '' || value === 0) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

export function callBuiltin(name: string, args: unknown[]): unknown {
  const wrap = (fn: () => unknown) => {
    try {
      return fn();
    } catch (err) {
      if (err instanceof ExecFailure) throw new ExecFailure(`error calling ${name}: ${err.message}`);
      throw err;
    }
  };
  const arity = (n: number) => {
    if (args.length !== n) throw new ExecFailure(`wrong number of args for ${name}: want ${n} got ${args.length}`);
  };
  const atLeast = (n: number) => {
    if (args.length < n)
      throw new ExecFailure(`wrong number of args for ${name}: want at least ${n} got ${args.length}`);
  };
  switch (name) {
    case 'index':
      atLeast(1);
      return wrap(() => index(args[0], args.slice(1)));
    case 'len':
      arity(1);
      return wrap(() => length(args[0]));
    case 'printf':
      atLeast(1);
      if (typeof args[0] !== 'string')
        throw new ExecFailure(`wrong type for value; expected string; got ${goType(args[0])}`);
      return goPrintf(args[0], args.slice(1));
    case 'print':
      return goSprint(args);
    case 'println':
      return goSprintln(args);
    case 'not':
      arity(1);
      return !truthy(args[0]);
    case 'and':
      atLeast(1);
      return args[
        firstOr(
          args.findIndex((a) => !truthy(a)),
          args.length - 1,
        )
      ];
    case 'or':
      atLeast(1);
      return args[
        firstOr(
          args.findIndex((a) => truthy(a)),
          args.length - 1,
        )
      ];
    case 'eq':
      atLeast(1);
      if (args.length < 2) throw new ExecFailure('error calling eq: missing argument for comparison');
      return wrap(() => args.slice(1).some((b) => compare(args[0], b, true) === 0));
    case 'ne':
      arity(2);
      return wrap(() => compare(args[0], args[1], true) !== 0);
    default: {
      arity(2);
      const order = wrap(() => compare(args[0], args[1], false)) as number;
      return name === 'lt' ? order < 0 : name === 'le' ? order <= 0 : name === 'gt' ? order > 0 : order >= 0;
    }
  }
}

const firstOr = (found: number, otherwise: number) => (found === -1 ? otherwise : found);

/** Go's index: x[i][j]…; a slice wants an int in range, a map any key (a missing one gives the zero value). */
function index(item: unknown, indices: unknown[]): unknown {
  if (item === undefined) throw new ExecFailure('index of untyped nil');
  let value: unknown = item;
  for (const key of indices) {
    if (Array.isArray(value) || typeof value === 'string' || (value === null && typeof key === 'number')) {
      const list: unknown[] | string = Array.isArray(value) || typeof value === 'string' ? value : [];
      if (typeof key !== 'number' || !Number.isInteger(key)) {
        throw new ExecFailure(
          key == null ? 'cannot index slice/array with nil' : `cannot index slice/array with type ${goType(key)}`,
        );
      }
      if (key < 0 || key >= list.length) throw new ExecFailure(`index out of range: ${key}`);
      value = typeof list === 'string' ? list.charCodeAt(key) : list[key];
    } else if (value === null || (typeof value === 'object' && value !== undefined)) {
      const map = (value ?? {}) as Record<string, unknown>;
      if (typeof key !== 'string') throw new ExecFailure(`value has type ${goType(key)}; should be string`);
      value = Object.hasOwn(map, key) ? map[key] : zeroOfValues(map);
    } else {
      throw new ExecFailure(`can't index item of type ${goType(value)}`);
    }
  }
  return value;
}

/** A missing key's zero value: "" in a map of strings (Nomad's Parameters, Meta, Attributes), nil otherwise. */
function zeroOfValues(map: Record<string, unknown>): unknown {
  const values = Object.values(map);
  return values.every((v) => typeof v === 'string') ? '' : null;
}

function length(item: unknown): number {
  if (item === undefined) throw new ExecFailure('len of untyped nil');
  if (item === null) return 0;
  if (typeof item === 'string') return Buffer.byteLength(item);
  if (Array.isArray(item)) return item.length;
  if (typeof item === 'object') return Object.keys(item).length;
  throw new ExecFailure(`len of type ${goType(item)}`);
}

/** Go's basic comparison: numbers with numbers, strings with strings, bools for equality only. */
function compare(a: unknown, b: unknown, equality: boolean): number {
  const kind = (v: unknown) =>
    typeof v === 'number'
      ? 'number'
      : typeof v === 'string'
        ? 'string'
        : typeof v === 'boolean'
          ? 'bool'
          : v === null || v === undefined
            ? 'nil'
            : 'other';
  const ka = kind(a);
  const kb = kind(b);
  if (ka === 'other' || kb === 'other')
    throw new ExecFailure(equality ? 'non-comparable type' : 'invalid type for comparison');
  if (equality && ka === 'nil' && kb === 'nil') return 0;
  if (ka !== kb) throw new ExecFailure('incompatible types for comparison');
  if (!equality && (ka === 'bool' || ka === 'nil')) throw new ExecFailure('invalid type for comparison');
  if (a === b) return 0;
  return (a as number | string) < (b as number | string) ? -1 : 1;
}
