import { isAbsolute, resolve } from 'node:path';
import { AgentError } from '../errors/agent-error.js';
import { blocks, isBody, nonEmptyText, parseHclOrJson, readSource, singleBlock } from './read-document.js';
import { DEFAULT_DATA_DIR, dataDirLayout, refuseNomadDataDir } from './data-dir.js';
import { readNodeSettings, type NodeSettings } from './node-settings.js';

/** A classic host volume from the agent config: reported beside dynamic ones, with an empty ID. */
export interface StaticHostVolume {
  name: string;
  path: string;
  readOnly: boolean;
}

export interface AgentConfig {
  /** Holds the node ID and client state. */
  dataDir: string;
  /** Where `dataDir` came from, for messages: `--data-dir`, `data_dir in <file>`, `DHV_DATA_DIR`, or the default. */
  dataDirSource?: string | undefined;
  /** Where `dataDir` came from, as a program reads it (the `--json` documents' `DataDir.From`). */
  dataDirFrom?: DataDirFrom | undefined;
  /** `host_volume_plugin_dir`. */
  pluginDir: string;
  /** `host_volumes_dir`, given to plugins as DHV_VOLUMES_DIR. */
  volumesDir: string;
  nodePool: string;
  hostVolumes: StaticHostVolume[];
  /** The config file it was read from, if any. */
  configFile?: string | undefined;
  /** The node's name, datacenter, class and meta from the config (published in the node). */
  node?: NodeSettings | undefined;
  /** Keys of the config file Nomad would not know, each with the nearest known one. */
  warnings?: string[] | undefined;
  /**
   * The `exec` driver's `allow_caps` (`plugin "exec" { config { allow_caps = [...] } }`): a
   * hardened client leaves `dac_override` out. Absent: Nomad's default, every default capability.
   */
  execAllowCaps?: string[] | undefined;
}

export interface AgentConfigInput {
  /** `--data-dir`; falls back to `data_dir` in the file, then `$DHV_DATA_DIR` (the two disagreeing is an error), then `./.dhv`. */
  dataDir?: string | undefined;
  /** `--config`: an agent config in HCL or JSON, shaped like Nomad's. */
  config?: string | undefined;
  pluginDir?: string | undefined;
  volumesDir?: string | undefined;
  nodePool?: string | undefined;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

export const DEFAULT_NODE_POOL = 'default';

/** Which setting named the data dir: the flag, `data_dir` in the `--config` file, the environment, or none (`./.dhv`). */
export type DataDirFrom = '--data-dir' | '--config' | 'DHV_DATA_DIR' | 'default';

/**
 * The agent configuration: flags override the config file, which overrides Nomad's
 * defaults (`<data_dir>/host_volume_plugins`, `<data_dir>/host_volumes`, `default`).
 * Every path is made absolute against the working directory, as Nomad does.
 */
export async function loadAgentConfig(input: AgentConfigInput = {}): Promise<AgentConfig> {
  const cwd = input.cwd ?? process.cwd();
  const env = input.env ?? process.env;
  const file = input.config ? await readConfigFile(input.config) : {};
  const abs = (p: string) => (isAbsolute(p) ? resolve(p) : resolve(cwd, p));
  const chosen =
    input.dataDir === undefined ? fileOrEnvDataDir(file.dataDir, env.DHV_DATA_DIR, abs, input.config) : undefined;
  const dataDir = abs(input.dataDir ?? chosen ?? DEFAULT_DATA_DIR);
  const dataDirSource =
    input.dataDir !== undefined
      ? '--data-dir'
      : chosen === undefined
        ? `the default, ./${DEFAULT_DATA_DIR} in ${cwd}: no --data-dir, DHV_DATA_DIR or data_dir in --config`
        : file.dataDir !== undefined
          ? `data_dir in ${abs(input.config!)}`
          : 'DHV_DATA_DIR';
  const dataDirFrom: DataDirFrom =
    input.dataDir !== undefined
      ? '--data-dir'
      : chosen === undefined
        ? 'default'
        : file.dataDir !== undefined
          ? '--config'
          : 'DHV_DATA_DIR';
  refuseNomadDataDir(dataDir, dataDirSource);
  return {
    dataDir,
    dataDirSource,
    dataDirFrom,
    pluginDir: abs(input.pluginDir ?? file.pluginDir ?? dataDirLayout(dataDir).pluginDir),
    volumesDir: abs(input.volumesDir ?? file.volumesDir ?? dataDirLayout(dataDir).volumesDir),
    nodePool: input.nodePool ?? file.nodePool ?? DEFAULT_NODE_POOL,
    hostVolumes: (file.hostVolumes ?? []).map((v) => ({ ...v, path: abs(v.path) })),
    configFile: input.config ? abs(input.config) : undefined,
    node: file.node ?? { meta: {} },
    warnings: file.warnings ?? [],
    ...(file.execAllowCaps ? { execAllowCaps: file.execAllowCaps } : {}),
  };
}

/**
 * `data_dir` of the file given with `--config` is the agent's own setting and wins over
 * `$DHV_DATA_DIR`; when both name a data dir and they differ, which one was meant cannot
 * be told, and a command run against the wrong one (gc above all) would act on another
 * agent's volumes, so it is an error naming both.
 */
function fileOrEnvDataDir(
  fromFile: string | undefined,
  fromEnv: string | undefined,
  abs: (p: string) => string,
  configFile: string | undefined,
): string | undefined {
  if (fromFile === undefined || fromEnv === undefined || fromEnv === '') return fromFile ?? (fromEnv || undefined);
  if (abs(fromFile) === abs(fromEnv)) return fromFile;
  throw new AgentError(
    'CONFIG_INVALID',
    `data_dir = "${abs(fromFile)}" in ${configFile ?? 'the agent config'} and DHV_DATA_DIR=${abs(fromEnv)} name different data dirs; ` +
      `unset DHV_DATA_DIR, or pass --data-dir to say which one this command uses`,
    { file: configFile, dataDir: abs(fromFile), envDataDir: abs(fromEnv) },
  );
}

interface FileConfig {
  dataDir?: string;
  pluginDir?: string;
  volumesDir?: string;
  nodePool?: string;
  hostVolumes?: StaticHostVolume[];
  node?: NodeSettings;
  warnings?: string[];
  execAllowCaps?: string[];
}

async function readConfigFile(path: string): Promise<FileConfig> {
  let doc: Record<string, unknown>;
  try {
    doc = await parseHclOrJson(await readSource(path), path);
  } catch (err) {
    throw new AgentError('CONFIG_INVALID', `${(err as Error).message}; fix the agent config file`, { file: path });
  }
  return parseClientConfig(doc, path);
}

/** Reads the parts of a Nomad agent config the host volume manager uses; reports every problem at once. */
export function parseClientConfig(doc: Record<string, unknown>, file = '<config>'): FileConfig {
  const problems: string[] = [];
  const out: FileConfig = {};
  const text = nonEmptyText(problems);
  const dataDir = text('data_dir', doc.data_dir);
  if (dataDir) out.dataDir = dataDir;
  const notBlocks = blocks(doc.client).filter((body) => !isBody(body));
  if (notBlocks.length > 0)
    problems.push(`client must be a block (client { ... }), got ${describeValue(notBlocks[0])}`);
  const client = singleBlock(doc.client) ?? {};
  const pluginDir = text('client.host_volume_plugin_dir', client.host_volume_plugin_dir);
  if (pluginDir) out.pluginDir = pluginDir;
  const volumesDir = text('client.host_volumes_dir', client.host_volumes_dir);
  if (volumesDir) out.volumesDir = volumesDir;
  const nodePool = text('client.node_pool', client.node_pool);
  if (nodePool) out.nodePool = nodePool;
  const hostVolumes: StaticHostVolume[] = [];
  for (const [name, body] of staticVolumeEntries(client.host_volume, problems)) {
    const where = `client.host_volume "${name}"`;
    const path = text(`${where}.path`, body.path);
    if (body.path === undefined) problems.push(`${where}.path is required`);
    const readOnly = body.read_only ?? false;
    if (typeof readOnly !== 'boolean') problems.push(`${where}.read_only must be true or false`);
    if (path) hostVolumes.push({ name, path, readOnly: readOnly === true });
  }
  if (hostVolumes.length > 0) out.hostVolumes = hostVolumes;
  const allowCaps = execAllowCaps(doc.plugin, problems);
  if (allowCaps) out.execAllowCaps = allowCaps;
  const node = readNodeSettings(doc, problems);
  out.node = node.settings;
  out.warnings = node.warnings;
  if (problems.length > 0) {
    throw new AgentError('CONFIG_INVALID', `invalid agent config ${file}: ${problems.join('; ')}`, { file, problems });
  }
  return out;
}

/** `plugin "exec" { config { allow_caps = [...] } }`: the one driver setting dhv models (which capabilities a task may get). */
function execAllowCaps(value: unknown, problems: string[]): string[] | undefined {
  let found: string[] | undefined;
  for (const group of blocks(value)) {
    if (!isBody(group)) continue;
    const exec = singleBlock((group as Record<string, unknown>).exec);
    const config = exec && singleBlock(exec.config);
    if (!config || config.allow_caps === undefined) continue;
    const caps = config.allow_caps;
    if (!Array.isArray(caps) || caps.some((c) => typeof c !== 'string'))
      problems.push(`plugin "exec".config.allow_caps must be a list of strings, got ${describeValue(caps)}`);
    else found = caps as string[];
  }
  return found;
}

/**
 * `host_volume "name" { ... }` comes from HCL as `{ name: [body] }`, and from Nomad's
 * JSON config either that way or as a list of `{ name: body }` objects.
 */
function staticVolumeEntries(value: unknown, problems: string[]): Array<[string, Record<string, unknown>]> {
  const entries: Array<[string, Record<string, unknown>]> = [];
  for (const group of blocks(value)) {
    if (!isBody(group)) {
      problems.push(
        `client.host_volume must be a block (host_volume "name" { path = "..." }), got ${describeValue(group)}`,
      );
      continue;
    }
    for (const [name, bodies] of Object.entries(group as Record<string, unknown>)) {
      if (blocks(bodies).some((b) => !isBody(b))) {
        problems.push(
          `client.host_volume ${JSON.stringify(name)} must be a block ({ path = "..." }), got ${describeValue(bodies)}`,
        );
        continue;
      }
      const body = singleBlock(bodies);
      if (body) entries.push([name, body]);
    }
  }
  return entries;
}

function describeValue(value: unknown): string {
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (Array.isArray(value)) return 'a list';
  return `${typeof value} ${String(value)}`;
}
