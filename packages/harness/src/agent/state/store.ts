import { mkdir, unlink } from 'node:fs/promises';
import { AgentLock } from './agent-lock.js';
import { ClientState } from './client-state.js';
import { stateLayout, type StateLayout } from './layout.js';
import { NameClaims } from './name-claims.js';
import { StateIndex } from './state-index.js';
import { loadNodeFacts, updateNodeFacts, type NodeFacts } from './node-facts.js';
import { loadNodeId } from './node-identity.js';
import { VolumeDisks } from './volume-disks.js';
import { VolumeHealth } from './volume-health.js';
import { VolumeMounts } from './volume-mounts.js';
import { JobRecords } from './job-records.js';
import { NamespaceRecords } from './namespace-records.js';

/**
 * The agent's state store: the only code that knows the data dir's layout and opens files
 * in it. It owns every durable thing the agent keeps, as Nomad's client keeps them in its
 * state DB and memory: the client-state records (`records`), the name claims (`claims`),
 * the outcome of the last restore (`health`), the disk each volume was created on (`disks`), what the node reported (node facts), the
 * node's identity, and the one lock that makes every `dhv` process on the data dir behave
 * as one agent (`lock`).
 */
export class AgentStore {
  readonly layout: StateLayout;
  readonly records: ClientState;
  readonly claims: NameClaims;
  readonly health: VolumeHealth;
  readonly disks: VolumeDisks;
  /** The mounts each volume's plugin made, by identity: the only ones a reboot takes off. */
  readonly mounts: VolumeMounts;
  readonly lock: AgentLock;
  /** The jobs registered and the allocations placed on the node. */
  readonly jobs: JobRecords;
  /** The namespaces volumes and jobs live in (`default` always). */
  readonly namespaces: NamespaceRecords;
  /** What the last restart read, in one file: the next one reads it instead of every volume's files. */
  readonly index: StateIndex;

  constructor(readonly dataDir: string) {
    this.layout = stateLayout(dataDir);
    this.index = new StateIndex(this.layout.stateIndex);
    this.records = new ClientState(dataDir, this.index);
    this.claims = new NameClaims(
      this.layout,
      (id) =>
        this.records.get(id).then(
          (record) => record?.CreateReq.Name,
          () => null,
        ),
      this.index,
    );
    this.disks = new VolumeDisks(dataDir, this.index);
    this.mounts = new VolumeMounts(dataDir);
    this.health = new VolumeHealth(dataDir, this.disks, this.mounts);
    this.lock = new AgentLock(this.layout);
    this.jobs = new JobRecords(this.layout);
    this.namespaces = new NamespaceRecords(this.layout);
  }

  /** Opens (creating on first use) the data dir. */
  static async open(dataDir: string): Promise<AgentStore> {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    return new AgentStore(dataDir);
  }

  /** The node ID, generated on first use. */
  nodeId(): Promise<string> {
    return loadNodeId(this.dataDir);
  }

  /** What the node last reported, or undefined before its first start. */
  nodeFacts(): Promise<NodeFacts | undefined> {
    return loadNodeFacts(this.dataDir);
  }

  /** Changes what the node reports, with no update of another process lost. */
  updateNodeFacts(change: (facts: NodeFacts | undefined) => NodeFacts | Promise<NodeFacts>): Promise<NodeFacts> {
    return updateNodeFacts(this.dataDir, change);
  }

  /**
   * At a start (the agent held exclusive): removes dead writers' temporary files and the
   * name locks killed holders left, and starts noting what this start reads for the index.
   */
  async sweep(): Promise<void> {
    this.index.begin();
    // A folder the index still matches has gained no file since the last start swept it.
    const folders = {
      records: this.layout.volumeRecords,
      claims: this.layout.nameClaims,
      disks: this.layout.volumeDisks,
    } as const;
    const skip = new Set(
      Object.entries(folders)
        .filter(([section, dir]) => this.index.unchanged(section as keyof typeof folders, dir))
        .map(([, dir]) => dir),
    );
    for (const file of await this.records.staleTempFiles(skip)) await unlink(file).catch(() => {});
    await this.claims.sweepFreeLocks();
  }

  /** At the end of a start (the agent still held exclusive): writes what it read and wrote as the index, if that changed. */
  saveIndex(): Promise<void> {
    return this.index.save();
  }
}
