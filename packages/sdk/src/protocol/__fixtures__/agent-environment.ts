import { ENV } from '../variables.js';

/** The volume the sample requests name. */
export const SAMPLE_VOLUME_ID = '5b8a2a5e-8f0a-4c8e-9a4f-0c7d3f2b1a99';
/** The node the sample requests name. */
export const SAMPLE_NODE_ID = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';

/** What the agent sends a create and a delete of the sample volume alike. */
export const SAMPLE_COMMON_ENV: Record<string, string> = {
  [ENV.volumesDir]: '/srv/volumes',
  [ENV.pluginDir]: '/opt/plugins',
  [ENV.namespace]: 'default',
  [ENV.volumeName]: 'data',
  [ENV.volumeId]: SAMPLE_VOLUME_ID,
  [ENV.nodeId]: SAMPLE_NODE_ID,
  [ENV.nodePool]: 'default',
  [ENV.parameters]: 'null',
};

/** The agent's environment for a create of the sample volume (no capacities), with `over` laid on it. */
export function sampleCreateEnv(over: Record<string, string | undefined> = {}): Record<string, string> {
  const env = {
    ...SAMPLE_COMMON_ENV,
    [ENV.operation]: 'create',
    [ENV.capacityMinBytes]: '0',
    [ENV.capacityMaxBytes]: '0',
    ...over,
  };
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}
