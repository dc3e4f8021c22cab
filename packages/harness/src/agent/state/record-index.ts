/**
 * The client-state records as the state index keeps them (`indexedRecords`), and made whole
 * again (`reviveRecords`). Both are derived from one table of the record's fields, `FIELDS`:
 * a field added to the record is added there, and reaches the encoder and the reviver alike.
 */

/** A client-state record as this codec sees it (`VolumeRecord` in client-state.ts). */
type IndexedRecord = {
  ID: string;
  HostPath: string;
  CreateReq: Record<string, unknown>;
  Volume: Record<string, unknown>;
};

/**
 * How a field's value is kept in the table and checked when revived: `text` a string, `bytes`
 * a byte count (a bigint, kept as decimal text), `list` an array, `value` anything, and
 * `optional` anything, the field left out of the record where the table holds null.
 */
type FieldKind = 'text' | 'bytes' | 'list' | 'value' | 'optional';

/**
 * The record's fields, in the order of an index row's places after its ID, name and path
 * (row[3] … row[15]), and of the keys of the record revived. `ID` and `Name` of the request
 * and the record's `ID` and `HostPath` are the row's first three items.
 */
const FIELDS: readonly { part: 'CreateReq' | 'Volume'; key: string; kind: FieldKind }[] = [
  { part: 'CreateReq', key: 'PluginID', kind: 'text' },
  { part: 'CreateReq', key: 'Namespace', kind: 'text' },
  { part: 'CreateReq', key: 'NodeID', kind: 'text' },
  { part: 'CreateReq', key: 'RequestedCapacityMinBytes', kind: 'bytes' },
  { part: 'CreateReq', key: 'RequestedCapacityMaxBytes', kind: 'bytes' },
  { part: 'CreateReq', key: 'Parameters', kind: 'value' },
  { part: 'Volume', key: 'Namespace', kind: 'optional' },
  { part: 'Volume', key: 'NodePool', kind: 'text' },
  { part: 'Volume', key: 'CapacityBytes', kind: 'bytes' },
  { part: 'Volume', key: 'RequestedCapabilities', kind: 'list' },
  { part: 'Volume', key: 'Constraints', kind: 'list' },
  { part: 'Volume', key: 'CreateTime', kind: 'text' },
  { part: 'Volume', key: 'ModifyTime', kind: 'text' },
];
const FIELD_KINDS = FIELDS.map((f) => f.kind);
const FIELD_KEYS = FIELDS.map((f) => f.key);
const FIELD_IN_REQUEST = FIELDS.map((f) => f.part === 'CreateReq');
/** The row's items before the fields': the ID, the name, the path. */
const LEAD = 3;
const ROW_LENGTH = LEAD + FIELDS.length;

const RECORD_KEYS = ['ID', 'HostPath', 'CreateReq', 'Volume'];
const keysOf = (part: 'CreateReq' | 'Volume', optional: boolean) =>
  FIELDS.filter((f) => f.part === part && (optional || f.kind !== 'optional')).map((f) => f.key);
const REQUEST_KEYS = ['ID', 'Name', ...keysOf('CreateReq', true)];
const VOLUME_KEYS = keysOf('Volume', true);
const VOLUME_KEYS_BUT_OPTIONAL = keysOf('Volume', false);

/** The byte counts of a record, by part: bigints in the record, decimal text in the index. */
export const BYTE_COUNT_FIELDS = FIELDS.filter((f) => f.kind === 'bytes');

const hasKeys = (value: object, keys: readonly string[]) => {
  const own = Object.keys(value);
  return own.length === keys.length && own.every((k) => keys.includes(k));
};

/** A record with its byte counts turned by `convert` (to text for the index, back to bigints). */
function withByteCounts<R extends Record<string, unknown>>(record: R, convert: (value: unknown) => unknown): R {
  const parts: Record<string, Record<string, unknown>> = {
    CreateReq: { ...(record.CreateReq as Record<string, unknown>) },
    Volume: { ...(record.Volume as Record<string, unknown>) },
  };
  for (const f of BYTE_COUNT_FIELDS) parts[f.part]![f.key] = convert(parts[f.part]![f.key]);
  return { ...record, CreateReq: parts.CreateReq, Volume: parts.Volume };
}

/**
 * The records as the state index keeps them: first a table of the values they share, then
 * one array per record, its ID and name as text and every other field as the place of its
 * value in the table (volumes made alike share a node, a pool, capabilities, times, and
 * their path but for the ID), a fifth of the bytes to parse of the records spelled out.
 * Byte counts are decimal text, so one JSON.parse reads them exactly. A record with any
 * other field set (a schema grown since) is kept whole, as an object. The table also keeps
 * each record file's stamp (`Files`: inode, size and ctime of each, in the records' order,
 * three numbers per record), so a file changed in place is read again.
 */
export function indexedRecords(records: readonly IndexedRecord[], files: readonly number[]): unknown[] {
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
    const volumeKeys = r.Volume.Namespace === undefined ? VOLUME_KEYS_BUT_OPTIONAL : VOLUME_KEYS;
    if (!hasKeys(r, RECORD_KEYS) || !hasKeys(r.CreateReq, REQUEST_KEYS) || !hasKeys(r.Volume, volumeKeys))
      return withByteCounts(r, String);
    // The path: the place of the folder it is in, when it ends in the ID; else -1 - the place of the path.
    const inFolder = r.HostPath.endsWith(`/${r.ID}`);
    return [
      r.ID,
      r.CreateReq.Name,
      inFolder ? place(r.HostPath.slice(0, -r.ID.length)) : -1 - place(r.HostPath),
      ...FIELDS.map(({ part, key, kind }) => {
        const value = r[part][key];
        return place(kind === 'bytes' ? String(value) : kind === 'optional' ? (value ?? null) : value);
      }),
    ];
  });
  return [{ Values: values, Files: files }, ...rows];
}

const DIGITS = /^-?[0-9]+$/;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

function bytes(v: unknown): bigint {
  if (v === '0') return 0n;
  if (typeof v !== 'string' || !DIGITS.test(v)) throw new TypeError('not a byte count');
  return BigInt(v);
}

/** The shared values of the index's table, each checked as its field's kind wants it. */
class ValueTable {
  private readonly revivedBytes = new Map<unknown, bigint>();

  constructor(private readonly values: unknown[]) {}

  at(place: unknown): unknown {
    if (typeof place !== 'number' || !Number.isInteger(place) || place < 0 || place >= this.values.length)
      throw new TypeError('not a place in the table');
    return this.values[place];
  }

  text(place: unknown): string {
    const value = this.at(place);
    if (typeof value !== 'string') throw new TypeError('not text');
    return value;
  }

  /** A record revived from its row, or undefined where the row is not one `indexedRecords` wrote. */
  record(row: unknown[]): IndexedRecord | undefined {
    if (row.length !== ROW_LENGTH) return undefined;
    const id = row[0];
    const name = row[1];
    const path = row[2];
    if (typeof id !== 'string' || typeof name !== 'string' || typeof path !== 'number') return undefined;
    const request: Record<string, unknown> = { ID: id, Name: name };
    const volume: Record<string, unknown> = {};
    // A plain loop over the table's columns: 10,000 records revive 130,000 fields.
    for (let i = 0; i < FIELDS.length; i++) {
      const kind = FIELD_KINDS[i]!;
      const value = this.field(kind, row[LEAD + i]);
      if (kind === 'list' && !Array.isArray(value)) return undefined;
      if (kind !== 'optional' || value !== null) (FIELD_IN_REQUEST[i] ? request : volume)[FIELD_KEYS[i]!] = value;
    }
    return {
      ID: id,
      HostPath: path >= 0 ? `${this.text(path)}${id}` : this.text(-1 - path),
      CreateReq: request,
      Volume: volume,
    };
  }

  private field(kind: FieldKind, place: unknown): unknown {
    if (kind === 'text') return this.text(place);
    if (kind !== 'bytes') return this.at(place);
    let n = this.revivedBytes.get(place);
    if (n === undefined) this.revivedBytes.set(place, (n = bytes(this.at(place))));
    return n;
  }
}

/** A record the index kept whole (its fields not those of `FIELDS`), or undefined where it is not one. */
function wholeRecord(item: unknown): IndexedRecord | undefined {
  if (!isObject(item) || typeof item.ID !== 'string' || typeof item.HostPath !== 'string') return undefined;
  const req = item.CreateReq;
  const volume = item.Volume;
  if (!isObject(req) || !isObject(volume) || req.ID !== item.ID || typeof req.Name !== 'string') return undefined;
  if (!Array.isArray(volume.RequestedCapabilities) || !Array.isArray(volume.Constraints)) return undefined;
  return withByteCounts(item, bytes) as unknown as IndexedRecord;
}

/**
 * The records of the index made whole again (byte counts as bigints), or undefined when
 * any item is not shaped as `indexedRecords` wrote it: the index was written from records
 * that passed the schema, so this checks only that it is that file. Records made alike
 * share the table's arrays and objects (capabilities, constraints, parameters), which
 * nothing changes in place.
 */
export function reviveRecords(items: unknown[]): { records: IndexedRecord[]; files: number[] } | undefined {
  const table = items[0];
  if (!isObject(table) || !Array.isArray(table.Values)) return undefined;
  // The stamp of each record's file when it was read (an index without them vouches for nothing).
  const files: unknown = table.Files;
  if (!Array.isArray(files) || files.length !== 3 * (items.length - 1) || !files.every((f) => typeof f === 'number'))
    return undefined;
  const values = new ValueTable(table.Values as unknown[]);
  const records: IndexedRecord[] = [];
  try {
    for (let i = 1; i < items.length; i++) {
      const item = items[i];
      const record = Array.isArray(item) ? values.record(item as unknown[]) : wholeRecord(item);
      if (!record) return undefined;
      records.push(record);
    }
  } catch {
    return undefined;
  }
  return { records, files: files as number[] };
}

/** What the index keeps of one record file: the record, and the file's stamp when it was read. */
export interface IndexedFile<R> {
  record: R;
  stamp: number[];
}

/** The records of an index section by ID, each with its file's stamp; undefined when the items do not revive. */
export function recordsById<R extends { ID: string }>(items: unknown[]): Map<string, IndexedFile<R>> | undefined {
  const revived = reviveRecords(items);
  if (!revived) return undefined;
  const byId = new Map<string, IndexedFile<R>>();
  revived.records.forEach((record, i) =>
    byId.set(record.ID, { record: record as unknown as R, stamp: revived.files.slice(3 * i, 3 * i + 3) }),
  );
  return byId;
}
