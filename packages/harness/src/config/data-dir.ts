import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AgentError } from '../errors/agent-error.js';

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

/** What a real Nomad client keeps in its data dir: dhv, a simulator, never writes beside it. */
const NOMAD_CLIENT_STATE = join('client', 'state.db');

/** How to name another data dir, for the errors below. */
const SET_DATA_DIR = 'pass --data-dir DIR, set DHV_DATA_DIR=DIR, or name data_dir in the file given with --config';

/**
 * Refuses a data dir that holds a Nomad agent's client state: dhv would adopt that node's
 * ID, write its own state beside Nomad's and call Nomad's live volumes orphans.
 */
export function refuseNomadDataDir(dataDir: string, source: string): void {
  if (!existsSync(join(dataDir, NOMAD_CLIENT_STATE))) return;
  throw new AgentError(
    'DATA_DIR_REFUSED',
    `the data dir ${dataDir} (${source}) holds a Nomad agent's client state (${NOMAD_CLIENT_STATE}): dhv is a simulator and never writes into a real agent's data dir; ` +
      `give dhv a folder of its own: ${SET_DATA_DIR} (in a copy of that config, set data_dir to a folder of dhv's own)`,
    { dataDir, source },
  );
}

/** A command that only reads refuses to invent a data dir: none there means none was made, and it says where it looked. */
export function requireDataDir(dataDir: string, source: string): void {
  if (existsSync(dataDir)) return;
  throw new AgentError(
    'DATA_DIR_MISSING',
    `no dhv data dir at ${dataDir} (${source}): no agent command has made one there, so there is nothing to show and none was created; ` +
      `to read another, ${SET_DATA_DIR}`,
    { dataDir, source },
  );
}
