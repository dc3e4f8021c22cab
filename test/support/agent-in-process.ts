import { encodeJson } from '@dhv/sdk';
import { Agent, loadAgentConfig, readVolumeSpec } from '@dhv/harness';

/**
 * The library calls the `dhv` volume and node commands make, run in the test's own process:
 * for what a test reads or sets up around the `dhv` processes it is about (the one it
 * killed, the ones it races), where a `dhv` start (about 0.4 s of processor time) would
 * only say the same thing. Each call opens the data dir afresh, as the next command
 * would, and gives what `--json` prints (the same encoding: integers, not bigints).
 * What a command adds around the library (its start-up's journal sweep, its flags, its
 * text) still needs a real `dhv`.
 */
export class InProcessAgent {
  constructor(
    readonly dataDir: string,
    private readonly configFile?: string,
  ) {}

  private async with<T>(fn: (agent: Agent) => Promise<T>): Promise<T> {
    // env {}: the data dir is given, and nothing of the test's environment ($DHV_DATA_DIR) may choose another.
    const config = await loadAgentConfig({ dataDir: this.dataDir, config: this.configFile, env: {} });
    const agent = await Agent.open(config);
    try {
      return JSON.parse(encodeJson(await fn(agent))) as T;
    } finally {
      await agent.shutdown();
    }
  }

  /** `volume status -json`: the volumes of the default namespace that have a record, by ID. */
  volumes<T = { ID: string; Name: string; State: string }>(): Promise<T[]> {
    return this.with(async (agent) =>
      (await agent.volumes()).filter((v) => v.Namespace === 'default').sort((a, b) => (a.ID < b.ID ? -1 : 1)),
    ) as Promise<T[]>;
  }

  /** `node status -json`: the node as it reports itself, `HostVolumes` by name. */
  node<T = { HostVolumes: Record<string, { ID: string }> }>(): Promise<T> {
    return this.with(async (agent) => (await agent.status()).node) as Promise<T>;
  }

  /** `volume create -json <spec>`: the volume written; throws the agent's error as the command would print it. */
  create<T = { ID: string; Name: string }>(specFile: string): Promise<T> {
    return this.with(
      async (agent) => (await agent.createVolume(await readVolumeSpec(specFile, 'create'))).volume,
    ) as Promise<T>;
  }

  /** `volume delete -json <id>`: the volume as it was. */
  delete<T = { ID: string }>(id: string): Promise<T> {
    return this.with((agent) => agent.deleteVolume(id, 'default')) as Promise<T>;
  }
}
