import { join } from 'node:path';
import type { AgentConfig } from '../config/agent-config.js';

/** An agent config whose data, plugin and volumes dirs are `data`, `plugins` and `volumes` under `dir`. */
export function agentConfigIn(dir: string): AgentConfig {
  return {
    dataDir: join(dir, 'data'),
    pluginDir: join(dir, 'plugins'),
    volumesDir: join(dir, 'volumes'),
    nodePool: 'default',
    hostVolumes: [],
  };
}
