import { dirname } from 'node:path';
import { ENV, NULL_PARAMETERS, type RequestField } from '../protocol/variables.js';
import type { Operation } from '../protocol/operations.js';
import type { RequestByOperation } from '../protocol/request.js';
import { goMarshalStringMap } from '../go/json-marshal.js';

type Widen<T> = { [K in keyof T]: T[K] extends bigint ? bigint | number : T[K] };
type Required = 'volumesDir' | 'volumeName' | 'volumeId' | 'nodeId';

/** A request as a caller gives it: the fields the agent always knows, the rest defaulted as the agent defaults them. */
export type RequestInput<Op extends Operation> = Widen<
  Pick<RequestByOperation[Op], Extract<keyof RequestByOperation[Op], Required>>
> &
  Partial<Widen<Omit<RequestByOperation[Op], Required>>>;

const DEFAULTS: Partial<Record<RequestField, string>> = {
  namespace: 'default',
  nodePool: 'default',
  capacityMinBytes: '0',
  capacityMaxBytes: '0',
  parameters: NULL_PARAMETERS,
  createdPath: '',
};

/** The order the agent builds the environment in (a plugin can see it: /proc/self/environ, `env`). */
export const ENV_ORDER = {
  fingerprint: [],
  create: [
    'volumesDir',
    'pluginDir',
    'nodePool',
    'namespace',
    'volumeName',
    'volumeId',
    'capacityMinBytes',
    'capacityMaxBytes',
    'nodeId',
    'parameters',
  ],
  delete: [
    'volumesDir',
    'pluginDir',
    'nodePool',
    'createdPath',
    'namespace',
    'volumeName',
    'volumeId',
    'nodeId',
    'parameters',
  ],
} as const satisfies Record<Operation, readonly RequestField[]>;

/**
 * The exact environment a Nomad agent gives a plugin for an operation: DHV_OPERATION and
 * that operation's variables, nothing else. DHV_PARAMETERS is marshalled as Go marshals
 * a map[string]string.
 */
export function buildEnvironment<Op extends Operation>(
  operation: Op,
  request: RequestInput<Op>,
  executable: string,
): Record<string, string> {
  const env: Record<string, string> = { [ENV.operation]: operation };
  const given = request as Record<string, unknown>;
  for (const field of ENV_ORDER[operation] as readonly RequestField[]) {
    env[ENV[field]] = encodeField(field, given[field], executable);
  }
  return env;
}

function encodeField(field: RequestField, value: unknown, executable: string): string {
  if (value === undefined) {
    if (field === 'pluginDir') return dirname(executable);
    const fallback = DEFAULTS[field];
    if (fallback === undefined) throw new TypeError(`request.${field} is required (it becomes ${ENV[field]})`);
    return fallback;
  }
  switch (field) {
    case 'capacityMinBytes':
    case 'capacityMaxBytes':
      if (typeof value === 'number' && !Number.isSafeInteger(value)) {
        throw new TypeError(`request.${field} must be a whole number of bytes (use a bigint above 2^53), got ${value}`);
      }
      return BigInt(value as number | bigint).toString();
    case 'parameters':
      return goMarshalStringMap(value as Record<string, string> | null);
    default:
      return String(value);
  }
}
