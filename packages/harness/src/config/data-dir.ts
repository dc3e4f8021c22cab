import { join } from 'node:path';

/** The data dir a command uses when neither a flag, `$DHV_DATA_DIR` nor the config names one. */
export const DEFAULT_DATA_DIR = '.dhv';

/**
 * The agent's dirs that default to folders of its data dir: `host_volume_plugin_dir` and
 * `host_volumes_dir`, named as Nomad names them. What the agent keeps in the data dir itself
 * (client state) is the state store's alone (agent/state/layout.ts).
 */
export function dataDirLayout(dataDir: string) {
  return {
    /** `host_volume_plugin_dir` when the config names none. */
    pluginDir: join(dataDir, 'host_volume_plugins'),
    /** `host_volumes_dir` when the config names none. */
    volumesDir: join(dataDir, 'host_volumes'),
  };
}

export type DataDirLayout = ReturnType<typeof dataDirLayout>;
