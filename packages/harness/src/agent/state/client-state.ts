import { lstatSync } from 'node:fs';
import { lstat, mkdir, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { encodeJson, isUuid } from '@dhv/sdk';
import { decodeJson } from '@dhv/sdk/client';
import { processExists } from '@dhv/sdk/host';
import { AgentError } from '../../errors/agent-error.js';
import {
  NotARegularFileError,
  TEMP_PREFIX,
  readRegularFile,
  readSmallRegularFileSync,
  removeFileDurably,
  tempFileWriter,
  syncFileSystemOf,
  writeFileAtomically,
  writeFileDurably,
} from './durable-file.js';
import { ACCESS_MODES, ATTACHMENT_MODES } from '../../volume-specs/volume-spec.js';
import { stateLayout } from './layout.js';
import { stampOf, type StateIndex } from './state-index.js';

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
}

export function isRegistered(record: VolumeRecord): boolean {
  return record.CreateReq.PluginID === '';
}

/** How many record files are read between turns of the event loop while loading. */
const READ_BATCH = 500;

export class ClientState {
  readonly dir: string;
  /** The records last revived from the index, by the index's items they came from. */
  private revived: { items: unknown[]; records: VolumeRecord[] } | undefined;

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
        {
          volumeId: record.ID,
          file: this.fileOf(record.ID),
        },
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
        {
          volumeId: id,
          file: this.fileOf(id),
        },
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
    if (indexed) return { records: [...indexed], damaged: [] };
    // Taken before the files are read: a change while they are read makes the noted stamp stale, never wrong.
    const stamp = stampOf(this.dir);
    const names = await this.entries();
    const records: VolumeRecord[] = [];
    const files: string[] = [];
    const damaged: DamagedRecord[] = [];
    // Thousands of small files read synchronously beat the same reads queued on libuv's
    // four threads several times over; batches keep the event loop turning in between.
    for (let i = 0; i < names.length; i += READ_BATCH) {
      for (const name of names.slice(i, i + READ_BATCH)) {
        const file = join(this.dir, name);
        const id = name.slice(0, -'.json'.length);
        const fileStamp = fileStampOf(file);
        try {
          const record = this.parseRecord(file, id, this.readTextSync(file));
          if (record) {
            records.push(record);
            files.push(fileStamp);
          }
        } catch (err) {
          if (!(err instanceof AgentError)) throw err;
          damaged.push({ id, file, error: err });
        }
      }
      await new Promise((r) => setImmediate(r));
    }
    // An index without the damaged files would vouch for a folder that holds them.
    if (damaged.length === 0) this.index?.note('records', stamp, () => indexedRecords(records, files));
    return { records, damaged };
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
    const unchanged = revived?.files.every(
      (stamp, i) => stamp === fileStampOf(`${this.dir}/${revived.records[i]!.ID}.json`),
    );
    if (!revived || !unchanged) {
      this.index?.forget('records');
      return undefined;
    }
    this.revived = { items, records: revived.records };
    return revived.records;
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
    return names.filter((n) => n.endsWith('.json') && !n.startsWith(TEMP_PREFIX)).sort();
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

/**
 * A record file's identity and state, as the index keeps it beside what the file held:
 * inode, size and ctime (which nothing sets back), so any write, truncation or
 * replacement since shows; absent when there is no file.
 */
function fileStampOf(file: string): string {
  try {
    const s = lstatSync(file, { throwIfNoEntry: false });
    // ctimeMs keeps the nanoseconds a double holds: enough to tell two writes apart.
    return s ? `${s.ino}:${s.size}:${s.ctimeMs}` : 'absent';
  } catch {
    return 'unknown';
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
    .filter((n) => n.startsWith(TEMP_PREFIX))
    .filter((n) => {
      const pid = tempFileWriter(n);
      return pid === undefined || !processExists(pid);
    })
    .map((n) => join(dir, n));
}

/** The fields of a record as the state index keeps them. */
const RECORD_KEYS = ['ID', 'HostPath', 'CreateReq', 'Volume'];
const REQUEST_KEYS = [
  'ID',
  'Name',
  'PluginID',
  'Namespace',
  'NodeID',
  'RequestedCapacityMinBytes',
  'RequestedCapacityMaxBytes',
  'Parameters',
];
const VOLUME_KEYS = [
  'Namespace',
  'NodePool',
  'CapacityBytes',
  'RequestedCapabilities',
  'Constraints',
  'CreateTime',
  'ModifyTime',
];

const hasKeys = (value: object, keys: readonly string[]) => {
  const own = Object.keys(value);
  return own.length === keys.length && own.every((k) => keys.includes(k));
};

/**
 * The records as the state index keeps them: first a table of the values they share, then
 * one array per record, its ID and name as text and every other field as the place of its
 * value in the table (volumes made alike share a node, a pool, capabilities, times, and
 * their path but for the ID), a fifth of the bytes to parse of the records spelled out.
 * Byte counts are decimal text, so one JSON.parse reads them exactly. A record with any
 * other field set (a schema grown since) is kept whole, as an object. The table also keeps
 * each record file's stamp (`Files`, in the records' order), so a file changed in place is
 * read again.
 */
function indexedRecords(records: readonly VolumeRecord[], files: readonly string[]): unknown[] {
  const values: unknown[] = [];
  const places = new Map<unknown, number>();
  const byText = new Map<string, number>();
  const place = (value: unknown): number => {
    const known = places.get(value);
    if (known !== undefined) return known;
    // Arrays and objects are shared by what they hold; strings and null by themselves.
    const text = typeof value === 'object' && value !== null ? JSON.stringify(value) : undefined;
    let at = text === undefined ? undefined : byText.get(text);
    if (at === undefined) {
      at = values.push(value) - 1;
      if (text !== undefined) byText.set(text, at);
    }
    places.set(value, at);
    return at;
  };
  const rows: unknown[] = records.map((r) => {
    const req = r.CreateReq;
    const v = r.Volume;
    const volumeKeys = v.Namespace === undefined ? VOLUME_KEYS.slice(1) : VOLUME_KEYS;
    if (!hasKeys(r, RECORD_KEYS) || !hasKeys(req, REQUEST_KEYS) || !hasKeys(v, volumeKeys)) {
      return {
        ...r,
        CreateReq: {
          ...req,
          RequestedCapacityMinBytes: String(req.RequestedCapacityMinBytes),
          RequestedCapacityMaxBytes: String(req.RequestedCapacityMaxBytes),
        },
        Volume: { ...v, CapacityBytes: String(v.CapacityBytes) },
      };
    }
    // The path: the place of the folder it is in, when it ends in the ID; else -1 - the place of the path.
    const inFolder = r.HostPath.endsWith(`/${r.ID}`);
    return [
      r.ID,
      req.Name,
      inFolder ? place(r.HostPath.slice(0, -r.ID.length)) : -1 - place(r.HostPath),
      place(req.PluginID),
      place(req.Namespace),
      place(req.NodeID),
      place(String(req.RequestedCapacityMinBytes)),
      place(String(req.RequestedCapacityMaxBytes)),
      place(req.Parameters),
      place(v.Namespace ?? null),
      place(v.NodePool),
      place(String(v.CapacityBytes)),
      place(v.RequestedCapabilities),
      place(v.Constraints),
      place(v.CreateTime),
      place(v.ModifyTime),
    ];
  });
  return [{ Values: values, Files: files }, ...rows];
}

/**
 * The records of the index made whole again (byte counts as bigints), or undefined when
 * any item is not shaped as `indexedRecords` wrote it: the index was written from records
 * that passed the schema, so this checks only that it is that file. Records made alike
 * share the table's arrays and objects (capabilities, constraints, parameters), which
 * nothing changes in place.
 */
function reviveRecords(items: unknown[]): { records: VolumeRecord[]; files: string[] } | undefined {
  const digits = /^-?[0-9]+$/;
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
  const bytes = (v: unknown) => {
    if (v === '0') return 0n;
    if (typeof v !== 'string' || !digits.test(v)) throw new TypeError('not a byte count');
    return BigInt(v);
  };
  const table = items[0];
  if (!isObject(table) || !Array.isArray(table.Values)) return undefined;
  // The stamp of each record's file when it was read (an index without them vouches for nothing).
  const files: unknown = table.Files;
  if (!Array.isArray(files) || files.length !== items.length - 1 || !files.every((f) => typeof f === 'string'))
    return undefined;
  const values: unknown[] = table.Values;
  const at = (place: unknown): unknown => {
    if (typeof place !== 'number' || !Number.isInteger(place) || place < 0 || place >= values.length)
      throw new TypeError('not a place in the table');
    return values[place];
  };
  const text = (place: unknown): string => {
    const value = at(place);
    if (typeof value !== 'string') throw new TypeError('not text');
    return value;
  };
  const revivedBytes = new Map<unknown, bigint>();
  const bytesAt = (place: unknown): bigint => {
    let n = revivedBytes.get(place);
    if (n === undefined) revivedBytes.set(place, (n = bytes(at(place))));
    return n;
  };
  const records: VolumeRecord[] = [];
  try {
    for (let i = 1; i < items.length; i++) {
      const item = items[i];
      if (Array.isArray(item)) {
        if (item.length !== 16) return undefined;
        const [id, name, path] = item as unknown[];
        const capabilities = at(item[12]);
        const constraints = at(item[13]);
        if (typeof id !== 'string' || typeof name !== 'string' || typeof path !== 'number') return undefined;
        if (!Array.isArray(capabilities) || !Array.isArray(constraints)) return undefined;
        const createReq = {
          ID: id,
          Name: name,
          PluginID: text(item[3]),
          Namespace: text(item[4]),
          NodeID: text(item[5]),
          RequestedCapacityMinBytes: bytesAt(item[6]),
          RequestedCapacityMaxBytes: bytesAt(item[7]),
          Parameters: at(item[8]),
        };
        const volume = {
          NodePool: text(item[10]),
          CapacityBytes: bytesAt(item[11]),
          RequestedCapabilities: capabilities,
          Constraints: constraints,
          CreateTime: text(item[14]),
          ModifyTime: text(item[15]),
        };
        const namespace = at(item[9]);
        records.push({
          ID: id,
          HostPath: path >= 0 ? `${text(path)}${id}` : text(-1 - path),
          CreateReq: createReq,
          Volume: namespace === null ? volume : { Namespace: namespace, ...volume },
        } as VolumeRecord);
        continue;
      }
      if (!isObject(item) || typeof item.ID !== 'string' || typeof item.HostPath !== 'string') return undefined;
      const req = item.CreateReq;
      const volume = item.Volume;
      if (!isObject(req) || !isObject(volume) || req.ID !== item.ID || typeof req.Name !== 'string') return undefined;
      if (!Array.isArray(volume.RequestedCapabilities) || !Array.isArray(volume.Constraints)) return undefined;
      records.push({
        ...item,
        CreateReq: {
          ...req,
          RequestedCapacityMinBytes: bytes(req.RequestedCapacityMinBytes),
          RequestedCapacityMaxBytes: bytes(req.RequestedCapacityMaxBytes),
        },
        Volume: { ...volume, CapacityBytes: bytes(volume.CapacityBytes) },
      } as VolumeRecord);
    }
  } catch {
    return undefined;
  }
  return { records, files: files as string[] };
}

/**
 * A record's JSON: plain `JSON.parse` when no number in it is long enough to lose precision
 * as a double (every record of a volume under 1 PB), its three byte counts then made
 * bigints; the SDK's exact decoder otherwise. A restore of 10,000 records spends a second
 * in the exact decoder and a tenth of that here.
 */
function decodeRecord(text: string): unknown {
  if (/[0-9]{16}/.test(text)) return decodeJson(text);
  let raw: { CreateReq?: Record<string, unknown>; Volume?: Record<string, unknown> };
  try {
    raw = JSON.parse(text) as typeof raw;
  } catch {
    return decodeJson(text); // its error says where the text goes wrong
  }
  const toBigInt = (holder: Record<string, unknown> | undefined, key: string) => {
    if (holder && typeof holder[key] === 'number' && Number.isSafeInteger(holder[key]))
      holder[key] = BigInt(holder[key]);
  };
  if (raw && typeof raw === 'object') {
    toBigInt(raw.CreateReq, 'RequestedCapacityMinBytes');
    toBigInt(raw.CreateReq, 'RequestedCapacityMaxBytes');
    toBigInt(raw.Volume, 'CapacityBytes');
  }
  return raw;
}
