import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync } from 'node:fs';
import { writeFileAtomically } from './durable-file.js';

/**
 * The state index: one file (`client/state-index.json`) holding what a restart read from
 * the folders of per-volume files (records, name claims, disk records), so that the next
 * restart reads one file instead of tens of thousands. It is a cache, never the truth: the
 * per-volume files stay where every create and delete writes them, and a section of the
 * index is used only while the folder it was read from is as it was then.
 *
 * "As it was" is the folder's stamp: device, inode, ctime and mtime in nanoseconds. dhv
 * writes a per-volume file by rename and removes it by unlink, and either changes the
 * folder's ctime, which nothing can set back; so a stamp that matches means the folder
 * holds the same files. (A file rewritten in place, which dhv never does, is not seen.)
 * One race remains, git's "racy index": a change in the same clock tick as the stamp would
 * leave the ctime as it was. The index is written by a restart holding the agent
 * exclusive, so no change happens between the stamp and the index's own write; and a
 * section is trusted only when its folder's ctime is strictly older than the index file's
 * ctime, so any later change gives the folder a ctime the stamp does not have.
 *
 * Written without fsync, by rename: a crash leaves the old index, the new one, or a file
 * that does not parse, and an index that does not load is only ignored.
 */

export type SectionName = 'records' | 'claims' | 'disks';

interface Section {
  /** The folder's stamp when its files were read, or null when it was too fresh to trust. */
  Stamp: string | null;
  /** The items, or their JSON text for a section a restart mostly does not read (`AS_TEXT`). */
  Items: unknown[] | string;
  /** What the items were made from, when its owner says (the claims: a digest of the winners a restart wrote). */
  Tag?: string;
}

interface IndexFile {
  Version: typeof VERSION;
  Sections: Partial<Record<SectionName, Section>>;
}

/** 2: records share a table of values, claims carry the tag of the winners they were written for; 3: record files' stamps as numbers. */
const VERSION = 3;

/**
 * Sections kept as JSON text inside the index, parsed only when asked for: a restart whose
 * winners match the claims' tag never reads the claims, so it does not build them either.
 */
const AS_TEXT: ReadonlySet<SectionName> = new Set(['claims']);

/** A folder's stamp and its ctime: `absent` for a folder that does not exist, null (never trusted) for one that cannot be looked at. */
export interface DirStamp {
  stamp: string | null;
  ctimeNs: bigint;
}

export function stampOf(dir: string): DirStamp {
  try {
    const s = lstatSync(dir, { bigint: true, throwIfNoEntry: false });
    if (!s) return { stamp: 'absent', ctimeNs: -1n };
    return { stamp: `${s.dev}:${s.ino}:${s.ctimeNs}:${s.mtimeNs}`, ctimeNs: s.ctimeNs };
  } catch {
    return { stamp: null, ctimeNs: -1n };
  }
}

/** What one section holds after this process read or wrote its folder. */
export interface SectionState {
  stamp: DirStamp;
  /** Built only when the index is written (kept as text when it was never parsed). */
  items: () => unknown[] | string;
  /** It came from the index and nothing in its folder changed since: writing it again would change nothing. */
  fromIndex: boolean;
  tag?: string | undefined;
}

export class StateIndex {
  private loaded: { identity: string; ctimeNs: bigint; file: IndexFile } | undefined | null = null;
  private readonly current = new Map<SectionName, SectionState>();
  /** A restart began here: only its `save` writes the index. */
  private restarting = false;

  constructor(private readonly file: string) {}

  /**
   * The items of `name` as the index holds them, when its folder `dir` is exactly as it
   * was when they were read; undefined when there is no index or the folder changed.
   */
  section(name: SectionName, dir: string): unknown[] | undefined {
    const section = this.trusted(name, dir);
    if (!section) return undefined;
    if (typeof section.Items === 'string') {
      try {
        const items: unknown = JSON.parse(section.Items);
        if (!Array.isArray(items)) throw new TypeError('not a list');
        section.Items = items;
      } catch {
        this.current.delete(name);
        return undefined;
      }
    }
    return section.Items;
  }

  /**
   * The tag section `name` was saved with, when its folder `dir` is exactly as it was then
   * (as `section`, but its items not read): its owner can tell from it alone that the
   * folder holds what it wants.
   */
  tag(name: SectionName, dir: string): string | undefined {
    return this.trusted(name, dir)?.Tag;
  }

  /** Whether section `name` holds its folder `dir` as it is (as `section`, but its items not read). */
  unchanged(name: SectionName, dir: string): boolean {
    return this.trusted(name, dir) !== undefined;
  }

  /**
   * The items of `name` as the index last held them, whatever its folder holds now: for a
   * section whose owner checks each item against its own file before it uses it, and
   * lists the folder itself (the records: a create that added one file need not read all).
   */
  lastRead(name: SectionName): unknown[] | undefined {
    const items = this.load()?.file.Sections[name]?.Items;
    return Array.isArray(items) ? items : undefined;
  }

  /**
   * Writes section `name` into the index as `items`, with no folder stamp (so it is never
   * trusted whole, only item by item through `lastRead`), the other sections as they are.
   * Safe without the agent held exclusive: a writer that loses a race to another loses
   * only cache. Not during a restart, whose `save` writes every section with its stamp.
   */
  async refresh(name: SectionName, items: unknown[]): Promise<void> {
    if (this.restarting) return;
    const loaded = this.load();
    const file: IndexFile = {
      Version: VERSION,
      Sections: { ...loaded?.file.Sections, [name]: { Stamp: null, Items: items } },
    };
    try {
      await writeFileAtomically(this.file, JSON.stringify(file));
    } catch {
      // No index: the next reader reads the files.
    }
    this.loaded = null;
  }

  /** Section `name` of the index when its folder `dir` is as it was when it was read, noted as this process's. */
  private trusted(name: SectionName, dir: string): Section | undefined {
    const index = this.load();
    const section = index?.file.Sections[name];
    if (!index || !section || section.Stamp === null) return undefined;
    if (!Array.isArray(section.Items) && typeof section.Items !== 'string') return undefined;
    const now = stampOf(dir);
    if (now.stamp === null || now.stamp !== section.Stamp || now.ctimeNs >= index.ctimeNs) return undefined;
    this.current.set(name, { stamp: now, items: () => section.Items, fromIndex: true, tag: section.Tag });
    return section;
  }

  /** Notes what section `name` now holds (read from its files, or written), with the stamp its folder had then. */
  note(name: SectionName, stamp: DirStamp, items: () => unknown[], tag?: string): void {
    this.current.set(name, { stamp, items, fromIndex: false, tag });
  }

  /** Tags what section `name` holds as noted or read from the index, to be saved with it. */
  retag(name: SectionName, tag: string): void {
    const state = this.current.get(name);
    if (state && state.tag !== tag) this.current.set(name, { ...state, fromIndex: false, tag });
  }

  /** Forgets what this process knew of section `name` (its folder changed in a way not noted). */
  forget(name: SectionName): void {
    this.current.delete(name);
  }

  /** Forgets everything noted: a restart starts from what is on disk. */
  begin(): void {
    this.current.clear();
    this.restarting = true;
  }

  /**
   * Writes what this process read and wrote (the sections noted) as the index, when any of
   * it is not what the index already holds. Only a restart calls this, holding the agent
   * exclusive, so no folder changes meanwhile. Best effort: the index is a cache, and a
   * restart on a full disk must not fail for it.
   */
  async save(): Promise<void> {
    const sections = [...this.current.entries()];
    if (sections.length === 0 || sections.every(([, s]) => s.fromIndex)) return;
    const file: IndexFile = { Version: VERSION, Sections: {} };
    for (const [name, s] of sections) {
      const items = s.items();
      file.Sections[name] = {
        Stamp: s.stamp.stamp,
        Items: AS_TEXT.has(name) && typeof items !== 'string' ? JSON.stringify(items) : items,
        ...(s.tag !== undefined ? { Tag: s.tag } : {}),
      };
    }
    const text = JSON.stringify(file);
    try {
      // A folder changed in the clock tick the index is written in could not be told from
      // one changed earlier: wait for the next tick, or leave that section untrusted.
      for (let attempt = 0; ; attempt++) {
        await writeFileAtomically(this.file, text);
        const written = lstatSync(this.file, { bigint: true }).ctimeNs;
        const racy = sections.filter(([, s]) => s.stamp.ctimeNs >= written);
        if (racy.length === 0) break;
        if (attempt === 2) {
          for (const [name] of racy) file.Sections[name]!.Stamp = null;
          await writeFileAtomically(this.file, JSON.stringify(file));
          break;
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    } catch {
      // No index: the next restart reads the files.
    }
    this.loaded = null;
  }

  private load() {
    if (this.loaded !== null) {
      // The same index as last time (a restart replaces it by rename): no second parse.
      const s = lstatSync(this.file, { bigint: true, throwIfNoEntry: false });
      if (this.loaded === undefined ? !s : s && `${s.dev}:${s.ino}:${s.ctimeNs}` === this.loaded.identity)
        return this.loaded;
    }
    this.loaded = readIndex(this.file);
    return this.loaded;
  }
}

function readIndex(path: string): { identity: string; ctimeNs: bigint; file: IndexFile } | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const s = fstatSync(fd, { bigint: true });
    if (!s.isFile()) return undefined;
    const file = JSON.parse(readFileSync(fd, 'utf8')) as IndexFile;
    if (file?.Version !== VERSION || typeof file.Sections !== 'object' || file.Sections === null) return undefined;
    return { identity: `${s.dev}:${s.ino}:${s.ctimeNs}`, ctimeNs: s.ctimeNs, file };
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
