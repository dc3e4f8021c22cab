import { lstat, mkdir, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { encodeJson, isUuid } from '@dhv/sdk';
import { PARTIAL_PREFIX, partialFileWriter, processExists } from '@dhv/sdk/host';
import { AgentError } from '../../errors/agent-error.js';
import {
  NotARegularFileError,
  readRegularFile,
  readSmallRegularFileSync,
  removeFileDurably,
  syncFileSystemOf,
  writeFileAtomically,
  writeFileDurably,
} from './durable-file.js';
import { ACCESS_MODES, ATTACHMENT_MODES } from '../../volume-specs/volume-spec.js';
import { stateLayout } from './layout.js';
import { stampOf, type StateIndex } from './state-index.js';
import { indexedRecords, recordsById, reviveRecords, type IndexedFile } from './record-index.js';
import { decodeRecord } from './record-file.js';
import { fileStampOf, filesUnchanged, sameStamp } from './record-stamps.js';

/**
 * The client state of the host volume manager. Nomad keeps it in its state DB, bucket
 * `host_volumes_to_create`, keyed by volume ID, each value `{ID, HostPath, CreateReq}`.
 * Here each volume is one file, `<data_dir>/client/host_volumes/<id>.json`, written by
 * rename after fsync: a crash leaves every volume fully recorded or absent, and two
 * processes writing different volumes never touch each other's files.
 */

// zod/mini, as the SDK: the full zod (and the locales it drags in, 700 KB) would be parsed by
// every dhv process. Its English messages, which the full zod sets up when first used, are
// what a corrupt record's error quotes, so they are set up here.
if (!z.config().localeError) z.config(en());

const int64 = z.bigint().check(z.gte(0n));
/** A size a plugin answered: any int64, as Go's decoder takes it (`"bytes": -1` included). */
const signedInt64 = z.bigint().check(z.gte(-(2n ** 63n)), z.lte(2n ** 63n - 1n));
const uuid = z.string().check(z.refine(isUuid, 'must be a UUID'));

function isStringMap(value: unknown): value is Record<string, string> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((v) => typeof v === 'string')
  );
}

/** Nomad's ClientHostVolumeCreateRequest: what restore hands the plugin again. */
const createRequestSchema = z.object({
  ID: uuid,
  Name: z.string().check(z.minLength(1)),
  /** Empty for a registered volume. */
  PluginID: z.string(),
  /** Empty for a registered volume: Nomad's register request carries no namespace. */
  Namespace: z.string(),
  NodeID: z.string().check(z.minLength(1)),
  RequestedCapacityMinBytes: int64,
  RequestedCapacityMaxBytes: int64,
  // Checked, not rebuilt: zod's record drops a key `__proto__`, and a plugin gets every key as written.
  Parameters: z.nullable(z.custom<Record<string, string>>(isStringMap, 'must be an object of strings')),
});

/** What Nomad's servers hold about the volume, kept beside the client's record so `volume status` can show it. */
const volumeSchema = z.object({
  /** The servers' namespace (a registered volume's CreateReq has none). */
  Namespace: z.optional(z.string()),
  /**
   * The plugin a registered volume names (its CreateReq has none): the servers keep it and
   * send it with the delete, so the plugin's delete runs (DHV_CREATED_PATH is the host_path).
   */
  PluginID: z.optional(z.string()),
  NodePool: z.string(),
  CapacityBytes: signedInt64,
  RequestedCapabilities: z.array(
    z.object({ AccessMode: z.enum(ACCESS_MODES), AttachmentMode: z.enum(ATTACHMENT_MODES) }),
  ),
  Constraints: z.array(z.object({ LTarget: z.string(), RTarget: z.string(), Operand: z.string() })),
  CreateTime: z.string(),
  ModifyTime: z.string(),
});

const recordSchema = z.object({
  ID: uuid,
  HostPath: z.string(),
  CreateReq: createRequestSchema,
  Volume: volumeSchema,
});

export type ClientCreateRequest = z.infer<typeof createRequestSchema>;
export type VolumeRecord = z.infer<typeof recordSchema>;

/** A record file that does not load (corrupt, cut short, not a plain file, unreadable): its volume alone is affected. */
export interface DamagedRecord {
  id: string;
  file: string;
  error: AgentError;
}

export interface ClientStateScan {
  records: VolumeRecord[];
  damaged: DamagedRecord[];
  /** How many record files were read: the others the state index held as their files are. */
  filesRead: number;
}

export function isRegistered(record: VolumeRecord): boolean {
  return record.CreateReq.PluginID === '';
}

/** How many record files are read between turns of the event loop while loading. */
const READ_BATCH = 500;
/** Record files a scan read, beyond which it writes what it read into the state index. */
const REFRESH_AFTER_READS = 16;

export class ClientState {
  readonly dir: string;
  /** The records last revived from the index, by the index's items they came from. */
  private revived: { items: unknown[]; records: VolumeRecord[] } | undefined;
  /** The same, by ID with their files' stamps, for a scan of a folder that changed since. */
  private lastKnown: { items: unknown[]; byId: ReadonlyMap<string, IndexedFile<VolumeRecord>> | undefined } | undefined;

  constructor(
    private readonly dataDir: string,
    private readonly index?: StateIndex,
  ) {
    this.dir = stateLayout(dataDir).volumeRecords;
  }

  fileOf(id: string): string {
    return join(this.dir, `${id}.json`);
  }

  async put(record: VolumeRecord): Promise<void> {
    this.index?.forget('records');
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    try {
      await writeFileDurably(this.fileOf(record.ID), `${encodeJson(record)}\n`);
    } catch (err) {
      throw new AgentError(
        'STATE_WRITE_FAILED',
        `could not save volume ${record.ID} to client state ${this.fileOf(record.ID)}: ${(err as Error).message}`,
        { volumeId: record.ID, file: this.fileOf(record.ID) },
      );
    }
  }

  /**
   * Records many volumes at once, as their creates would have (seeding a node for a test
   * or a benchmark): each file renamed into place, then one `sync -f` for them all.
   */
  async putMany(records: readonly VolumeRecord[]): Promise<void> {
    this.index?.forget('records');
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    for (const record of records) await writeFileAtomically(this.fileOf(record.ID), `${encodeJson(record)}\n`);
    await syncFileSystemOf(this.dir);
  }

  async remove(id: string): Promise<void> {
    this.index?.forget('records');
    try {
      await removeFileDurably(this.fileOf(id));
    } catch (err) {
      throw new AgentError(
        'STATE_WRITE_FAILED',
        `could not remove volume ${id} from client state ${this.fileOf(id)}: ${(err as Error).message}`,
        { volumeId: id, file: this.fileOf(id) },
      );
    }
  }

  /** One volume's record, or undefined when it has none. A record that does not load throws. */
  async get(id: string): Promise<VolumeRecord | undefined> {
    if (!isUuid(id)) return undefined;
    return this.readRecord(this.fileOf(id), id);
  }

  /** Whether volume `id` has a record, without reading it. */
  async has(id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    return lstat(this.fileOf(id)).then(
      () => true,
      () => false,
    );
  }

  /** The IDs that have a record, without reading them. */
  async ids(): Promise<string[]> {
    return (await this.entries()).map((name) => name.slice(0, -'.json'.length));
  }

  /** Every record that loads, sorted by ID (`scan` says which did not). */
  async list(): Promise<VolumeRecord[]> {
    return (await this.scan()).records;
  }

  /**
   * Every record, sorted by ID, and every file that does not load, each with the error
   * naming it and the fix: a damaged record affects only its own volume, and is never
   * silently discarded or overwritten.
   */
  async scan(): Promise<ClientStateScan> {
    const indexed = this.fromIndex();
    if (indexed) return { records: [...indexed], damaged: [], filesRead: 0 };
    // Taken before the files are read: a change while they are read makes the noted stamp stale, never wrong.
    const stamp = stampOf(this.dir);
    const names = await this.entries();
    const known = this.lastIndexed();
    const records: VolumeRecord[] = [];
    const files: number[] = [];
    const damaged: DamagedRecord[] = [];
    let read = 0;
    // Thousands of small files read synchronously beat the same reads queued on libuv's
    // four threads several times over; batches keep the event loop turning in between.
    for (let i = 0; i < names.length; i += READ_BATCH) {
      for (const name of names.slice(i, i + READ_BATCH)) {
        const file = join(this.dir, name);
        const id = name.slice(0, -'.json'.length);
        const fileStamp = fileStampOf(file);
        // A file the index read, not written since, holds what the index keeps of it.
        const same = known?.get(id);
        if (same && sameStamp(same.stamp, fileStamp)) {
          records.push(same.record);
          files.push(...fileStamp);
          continue;
        }
        read++;
        try {
          const record = this.parseRecord(file, id, this.readTextSync(file));
          if (record) {
            records.push(record);
            files.push(...fileStamp);
          }
        } catch (err) {
          if (!(err instanceof AgentError)) throw err;
          damaged.push({ id, file, error: err });
        }
      }
      await new Promise((r) => setImmediate(r));
    }
    // An index without the damaged files would vouch for a folder that holds them.
    if (damaged.length === 0) {
      this.index?.note('records', stamp, () => indexedRecords(records, files));
      // Creates since the last restart each add a file the index lacks: once a few are read
      // at every scan, the index takes them, and the next create reads only its own.
      if (read >= REFRESH_AFTER_READS) await this.index?.refresh('records', indexedRecords(records, files));
    }
    return { records, damaged, filesRead: read };
  }

  /** The records the index last held, by ID, each with its file's stamp then (see `scan`). */
  private lastIndexed(): ReadonlyMap<string, IndexedFile<VolumeRecord>> | undefined {
    const items = this.index?.lastRead('records');
    if (!items) return undefined;
    if (this.lastKnown?.items !== items) this.lastKnown = { items, byId: recordsById<VolumeRecord>(items) };
    return this.lastKnown.byId;
  }

  /**
   * The records as the state index holds them, when the records folder is as it was when
   * they were read and so is every record file (a file rewritten or cut short in place
   * leaves its folder as it was); else undefined, and they are read from their files.
   */
  private fromIndex(): VolumeRecord[] | undefined {
    const items = this.index?.section('records', this.dir);
    if (!items) return undefined;
    if (this.revived?.items === items) return this.revived.records;
    const revived = reviveRecords(items);
    if (!revived || !filesUnchanged(`${this.dir}/`, revived.records, revived.files)) {
      this.index?.forget('records');
      return undefined;
    }
    const records = revived.records as VolumeRecord[];
    this.revived = { items, records };
    return records;
  }

  /**
   * Temporary files left by writers that died mid-write, in every folder of the data dir
   * that durable writes go to (records, name claims, restore failures, disk records, node
   * facts, the index), but those in `skip` (folders the index says are unchanged); they
   * never hold anything committed.
   */
  async staleTempFiles(skip: ReadonlySet<string> = new Set()): Promise<string[]> {
    const layout = stateLayout(this.dataDir);
    const dirs = [
      this.dir,
      layout.nameClaims,
      layout.claimedIds,
      layout.volumeFailures,
      layout.volumeDisks,
      layout.client,
      this.dataDir,
    ].filter((dir) => !skip.has(dir));
    return (await Promise.all(dirs.map((dir) => staleTempFilesIn(dir)))).flat();
  }

  private async entries(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new AgentError('STATE_UNREADABLE', `cannot list client state ${this.dir}: ${(err as Error).message}`, {
        file: this.dir,
      });
    }
    return names.filter((n) => n.endsWith('.json') && !n.startsWith(PARTIAL_PREFIX)).sort();
  }

  private async readRecord(file: string, expectedId: string): Promise<VolumeRecord | undefined> {
    let text: string | undefined;
    try {
      text = await readRegularFile(file);
    } catch (err) {
      text = unreadable(file, err);
    }
    return this.parseRecord(file, expectedId, text);
  }

  private readTextSync(file: string): string | undefined {
    try {
      return readSmallRegularFileSync(file);
    } catch (err) {
      return unreadable(file, err);
    }
  }

  private parseRecord(file: string, expectedId: string, text: string | undefined): VolumeRecord | undefined {
    if (text === undefined) return undefined;
    const corrupt = (why: string) =>
      new AgentError(
        'STATE_CORRUPT',
        `client state file ${file} is corrupt (${why}). dhv leaves volume ${expectedId} alone rather than forget it (every other volume is unaffected): repair the file, or move it out of ${this.dir} if the volume is gone`,
        { file, volumeId: expectedId },
      );
    let raw: unknown;
    try {
      raw = decodeRecord(text);
    } catch (err) {
      throw corrupt((err as Error).message);
    }
    const parsed = recordSchema.safeParse(raw);
    if (!parsed.success)
      throw corrupt(parsed.error.issues.map((i) => `${i.path.join('.') || 'record'}: ${i.message}`).join('; '));
    if (parsed.data.ID !== expectedId || parsed.data.CreateReq.ID !== expectedId)
      throw corrupt(`it holds volume ${parsed.data.ID}, not ${expectedId}`);
    return parsed.data;
  }
}

/** A record removed since it was listed is simply gone; any other read error is that record's. */
function unreadable(file: string, err: unknown): undefined {
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  if (err instanceof NotARegularFileError) {
    throw new AgentError(
      'STATE_UNREADABLE',
      `cannot read client state file ${err.message}. dhv leaves this volume alone rather than read it (every other volume is unaffected): move it out of ${dirname(file)}`,
      { file },
    );
  }
  throw new AgentError(
    'STATE_UNREADABLE',
    `cannot read client state file ${file}: ${(err as Error).message}. dhv leaves this volume alone until it can (every other volume is unaffected): fix its permissions`,
    { file },
  );
}

async function staleTempFilesIn(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.startsWith(PARTIAL_PREFIX))
    .filter((n) => {
      const pid = partialFileWriter(n);
      return pid === undefined || !processExists(pid);
    })
    .map((n) => join(dir, n));
}
