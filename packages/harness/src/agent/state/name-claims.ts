import { readlinkSync } from 'node:fs';
import { lstat, mkdir, readdir, readlink, rename, symlink, unlink } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { isUuid, removeFreeLock } from '@dhv/sdk';
import { PARTIAL_PREFIX } from '@dhv/sdk/host';
import {
  durableStep,
  readRegularFile,
  removeFileDurably,
  syncDirectory,
  syncFileSystemOf,
  writeFileDurably,
} from './durable-file.js';
import { AgentError } from '../../errors/agent-error.js';
import { EVERY_NAME_LOCK, nameKey } from './agent-lock.js';
import type { StateLayout } from './layout.js';
import { stampOf, type StateIndex } from './state-index.js';

type ClaimEntry = Claim & { file: string };
/** A claim as the state index keeps it: its file, the holder's ID, the name (null when too long to keep). */
type IndexedClaim = [file: string, id: string, name: string | null];

/** Nomad's ErrVolumeNameExists, word for word. */
export const VOLUME_NAME_EXISTS = 'volume name already exists on this node';

/** Longest name kept in a claim (for gc's listing); a longer one is kept as its ID alone. */
const MAX_KEPT_NAME_BYTES = 2048;
const LEGACY_SUFFIX = '.json';
/** Between a claim's ID and name in its target, in place of `.`, for a name kept after a rename. */
const KEPT_MARK = '+';

export interface Claim {
  id: string;
  /** The claimed name, when it was short enough to keep (gc shows it and hands it to the plugin's delete). */
  name: string | undefined;
  /** Kept by a volume renamed since (Nomad keeps the old name until a restart): held while the volume has a record. */
  kept?: boolean;
}

/**
 * What a claim's holder has in client state: its record's name, `null` for a record that
 * does not load (the volume is there), undefined for none.
 */
export type RecordedName = (id: string) => Promise<string | null | undefined>;

/**
 * The agent's volume-name locks: a map of name to volume ID, as Nomad's host volume
 * manager keeps it in memory. A name held by one ID refuses every other ID; the holder
 * itself may claim it again. A claim lasts until it is released by name (a failed create
 * or update, a cleanup after a failed state write, a delete) or the agent restarts, which
 * claims every restored volume's name again.
 *
 * Every `dhv` command is a new process, so the map lives on disk: one symbolic link per
 * name, `host_volume_names/<sha256 of the name>`, whose target is the holder's ID (and
 * the name, base64url): a claim is read with one readlink and the whole map with one
 * readdir, and a claim replaced by rename is never absent in between. Changed only while
 * the agent lock covers the name (agent-lock.ts).
 *
 * `host_volume_ids/<id>` remembers an ID whose claim a restart or a later create took
 * away while its volume was not in client state (a create cut short), so gc still knows
 * that volume was made by this agent.
 */
export class NameClaims {
  private readonly dir: string;
  private readonly idDir: string;

  /** The claims last taken from the index, by the index's items they came from. */
  private revived: { items: unknown[]; claims: Map<string, ClaimEntry> } | undefined;

  constructor(
    private readonly layout: StateLayout,
    private readonly recordedName: RecordedName,
    private readonly index?: StateIndex,
  ) {
    this.dir = layout.nameClaims;
    this.idDir = layout.claimedIds;
  }

  /** The volume ID holding `name`, if any. */
  async holder(name: string): Promise<string | undefined> {
    return (await this.readClaim(nameKey(name)))?.id;
  }

  /**
   * Claims `name` for `id` (with the name's lock held). Returns whether the name was free
   * before (Nomad's "new volume", which decides whether a failed state write runs the
   * cleanup delete); throws when another ID holds it.
   */
  async claim(name: string, id: string): Promise<{ wasFree: boolean }> {
    const claim = await this.readClaim(nameKey(name));
    let holder = claim?.id;
    // Nomad's map dies with the agent. Here a claim is a file, and one is left by a `dhv`
    // killed mid-create or mid-rename: since everything that claims a name does so under its
    // lock and finishes, or releases it, before letting go, a claim found under the lock is
    // held only while its holder's record names it (or, kept after a rename, while the
    // holder has a record at all). Anything else is what a killed transition left: no claim.
    if (holder !== undefined && holder !== id && !(await this.holds(claim!, name))) {
      await this.rememberId(holder);
      holder = undefined;
    }
    if (holder !== undefined && holder !== id) throw nameTaken(name, holder);
    if (holder === undefined) {
      this.index?.forget('claims');
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      try {
        await this.link(nameKey(name), id, name);
        await syncDirectory(this.dir);
        durableStep();
      } catch (err) {
        throw new AgentError(
          'STATE_WRITE_FAILED',
          `could not claim the name "${name}" for volume ${id} in ${join(this.dir, nameKey(name))}: ${(err as Error).message}`,
          { volumeId: id, file: join(this.dir, nameKey(name)) },
        );
      }
    }
    return { wasFree: holder === undefined };
  }

  /** Whether `claim` of `name` still holds, judged against its holder's record (see `claim`). */
  private async holds(claim: Claim, name: string): Promise<boolean> {
    const recorded = await this.recordedName(claim.id);
    if (recorded === undefined) return false;
    return recorded === null || recorded === name || claim.kept === true;
  }

  /**
   * Marks `name`, held by `id`, as kept by a volume being renamed away from it: Nomad's
   * client keeps the old name locked (and on the node) until the agent restarts. Written
   * before the renamed record, so a crash in between leaves the old name held and the new
   * one not (its claim then names a record that does not name it).
   */
  async keep(name: string, id: string): Promise<void> {
    const claim = await this.readClaim(nameKey(name));
    if (claim?.id !== id || claim.kept) return;
    this.index?.forget('claims');
    await this.link(nameKey(name), id, name, true);
    await syncDirectory(this.dir);
    durableStep();
  }

  /**
   * Releases `name` if `id` holds it (compare-and-release): a stale request never frees a
   * name another volume holds since. Nomad releases by name alone, but its servers never
   * send a request for a volume that is gone.
   */
  async release(name: string, id: string): Promise<void> {
    const holder = await this.holder(name);
    if (holder !== undefined && holder !== id) return;
    this.index?.forget('claims');
    await removeFileDurably(join(this.dir, nameKey(name)));
    await removeFileDurably(join(this.dir, `${nameKey(name)}${LEGACY_SUFFIX}`));
    if (holder !== undefined) await this.forgetId(holder);
  }

  /** Every claim, `{name: volume ID}` (a name too long to keep appears as its ID). */
  async all(): Promise<Record<string, string>> {
    // Defined, not assigned: a volume named `__proto__` is a key like any other.
    return Object.fromEntries([...(await this.readAll()).values()].map((c) => [c.name ?? c.id, c.id]));
  }

  /** Every claim by the ID holding it, `{id: name}`, for gc. */
  async namesById(): Promise<Map<string, string | undefined>> {
    const out = new Map<string, string | undefined>();
    for (const claim of (await this.readAll()).values()) out.set(claim.id, claim.name);
    return out;
  }

  /**
   * The claims as a restart leaves them: exactly `winners` (name to ID), as if every claim
   * had been forgotten and each name claimed again, written as the difference from what is
   * on disk (a restart after a restart writes nothing). A claim dropped whose volume is not
   * among `recorded` (client state) is remembered for gc; without `recorded` (state that
   * does not load) nothing is. Made durable with one `sync -f` when anything changed.
   */
  async replaceAll(winners: ReadonlyMap<string, string>, recorded?: Pick<ReadonlySet<string>, 'has'>): Promise<void> {
    // The index says what the last restart left the folder holding, and the folder has not
    // changed since: when that was these very winners, there is nothing to read or write.
    const tag = winnersTag(winners);
    if (this.index?.tag('claims', this.dir) === tag) return;
    const { claims: current, indexed } = await this.readAllNoted();
    // A name's key is a digest; the index's claims were written at their names' keys, so a
    // name the index holds keeps its key without hashing it again.
    const keyOfName = new Map<string, string>();
    if (indexed) for (const [key, claim] of current) if (claim.name !== undefined) keyOfName.set(claim.name, key);
    const wanted = new Map<string, { name: string; id: string }>();
    for (const [name, id] of winners) wanted.set(keyOfName.get(name) ?? nameKey(name), { name, id });
    let changed = false;
    for (const [key, claim] of current) {
      if (wanted.get(key)?.id === claim.id && claim.file === key) continue;
      if (recorded && !recorded.has(claim.id)) await this.rememberId(claim.id);
      if (!wanted.has(key) || claim.file !== key) {
        await unlink(join(this.dir, claim.file)).catch(() => {});
        changed = true;
        // Durable for a kill, not yet for a power cut (the sync below): a point the crash walk kills at.
        durableStep();
      }
    }
    if (wanted.size > 0) await mkdir(this.dir, { recursive: true, mode: 0o700 });
    for (const [key, { name, id }] of wanted) {
      const now = current.get(key);
      if (now?.id === id && now.file === key) continue;
      await this.link(key, id, name);
      changed = true;
      durableStep();
    }
    if (!changed) {
      this.index?.retag('claims', tag);
      return;
    }
    await syncFileSystemOf(this.dir);
    const stamp = stampOf(this.dir);
    this.index?.note(
      'claims',
      stamp,
      () => [...wanted].map(([key, { name, id }]): IndexedClaim => [key, id, keptName(name) ?? null]),
      tag,
    );
  }

  /** Whether a create of this agent ever claimed a name for volume `id` (and it was not released since). */
  async wasClaimed(id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    if ([...(await this.readAll()).values()].some((c) => c.id === id)) return true;
    return lstat(join(this.idDir, id)).then(
      () => true,
      () => false,
    );
  }

  /** Forgets that `id` was claimed, once its volume is gone. */
  async forgetId(id: string): Promise<void> {
    if (!isUuid(id)) return;
    await removeFileDurably(join(this.idDir, id)).catch(() => {});
  }

  /** Removes name lock files that holders killed meanwhile left behind and nobody holds; returns them. */
  async sweepFreeLocks(): Promise<string[]> {
    const removed: string[] = [];
    for (const lock of await this.nameLockFiles()) if (await removeFreeLock(lock)) removed.push(lock);
    return removed;
  }

  /** The name lock files on disk (the lock of every name, which stays, is not one). */
  async nameLockFiles(): Promise<string[]> {
    const names = await readdir(this.layout.locks).catch(() => [] as string[]);
    return names.filter((n) => n.endsWith('.lock') && n !== EVERY_NAME_LOCK).map((n) => join(this.layout.locks, n));
  }

  /** Remembers that a create of this agent claimed `id`, so gc knows what is left of it as this agent's. */
  async rememberId(id: string): Promise<void> {
    if (!isUuid(id)) return;
    await mkdir(this.idDir, { recursive: true, mode: 0o700 });
    await writeFileDurably(join(this.idDir, id), '');
  }

  /** Points `key` at `id` by rename, so a claim is replaced without a moment of absence. */
  private async link(key: string, id: string, name: string, kept = false): Promise<void> {
    const encoded = Buffer.from(name).toString('base64url');
    const target = `${id}${kept ? KEPT_MARK : keptName(name) !== undefined ? '.' : ''}${keptName(name) !== undefined ? encoded : ''}`;
    const temp = join(this.dir, `${PARTIAL_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}-${key}`);
    await symlink(target, temp);
    try {
      await rename(temp, join(this.dir, key));
    } catch (err) {
      await unlink(temp).catch(() => {});
      throw err;
    }
  }

  private async readClaim(key: string): Promise<Claim | undefined> {
    return (
      parseTarget(await readlink(join(this.dir, key)).catch(() => undefined)) ??
      (await this.readLegacy(`${key}${LEGACY_SUFFIX}`))
    );
  }

  /**
   * Every claim by its key: one readdir, then one readlink each. A claim an older dhv wrote
   * (a `<key>.json` file holding `{Name, ID}`) still counts, until a restart rewrites it.
   */
  private async readAll(): Promise<Map<string, ClaimEntry>> {
    return (await this.readAllNoted()).claims;
  }

  /** The claims, from the state index while the claims folder is as it was then, else from their files (noted for the index). */
  private async readAllNoted(): Promise<{ claims: Map<string, ClaimEntry>; indexed: boolean }> {
    const items = this.index?.section('claims', this.dir);
    if (items) {
      if (this.revived?.items === items) return { claims: this.revived.claims, indexed: true };
      const claims = reviveClaims(items);
      if (claims) {
        this.revived = { items, claims };
        return { claims, indexed: true };
      }
      this.index?.forget('claims');
    }
    const stamp = stampOf(this.dir);
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const out = new Map<string, ClaimEntry>();
    for (const file of names) {
      if (file.startsWith(PARTIAL_PREFIX)) continue;
      const claim = file.endsWith(LEGACY_SUFFIX) ? await this.readLegacy(file) : readTarget(join(this.dir, file));
      if (claim)
        out.set(file.endsWith(LEGACY_SUFFIX) ? file.slice(0, -LEGACY_SUFFIX.length) : file, { ...claim, file });
    }
    this.index?.note('claims', stamp, () => [...out].map(([, c]): IndexedClaim => [c.file, c.id, c.name ?? null]));
    return { claims: out, indexed: false };
  }

  private async readLegacy(file: string): Promise<Claim | undefined> {
    try {
      const claim = JSON.parse(await readRegularFile(join(this.dir, file))) as { Name?: unknown; ID?: unknown };
      return typeof claim.Name === 'string' && typeof claim.ID === 'string' && isUuid(claim.ID)
        ? { id: claim.ID, name: claim.Name }
        : undefined;
    } catch {
      return undefined;
    }
  }
}

/**
 * A digest of a restart's winners, name and ID of each in order: equal digests, equal claims
 * (each name's key is its digest, each target its ID and name), so a restart that finds the
 * tag it left on an unchanged folder knows the folder is already what it would write.
 */
function winnersTag(winners: ReadonlyMap<string, string>): string {
  const hash = createHash('sha256');
  let chunk = '';
  for (const [name, id] of winners) {
    chunk += `${name.length}:${name}${id.length}:${id}`;
    if (chunk.length > 65536) {
      hash.update(chunk);
      chunk = '';
    }
  }
  return hash.update(chunk).digest('base64url');
}

/** The name as a claim keeps it: undefined when it is too long to keep. */
function keptName(name: string): string | undefined {
  return Buffer.from(name).toString('base64url').length <= MAX_KEPT_NAME_BYTES ? name : undefined;
}

function reviveClaims(items: unknown[]): Map<string, ClaimEntry> | undefined {
  const out = new Map<string, ClaimEntry>();
  for (const item of items) {
    if (!Array.isArray(item) || item.length !== 3) return undefined;
    const [file, id, name] = item as unknown[];
    if (typeof file !== 'string' || typeof id !== 'string' || !(name === null || typeof name === 'string'))
      return undefined;
    out.set(file.endsWith(LEGACY_SUFFIX) ? file.slice(0, -LEGACY_SUFFIX.length) : file, {
      id,
      name: name ?? undefined,
      file,
    });
  }
  return out;
}

function readTarget(path: string): Claim | undefined {
  try {
    return parseTarget(readlinkSync(path));
  } catch {
    return undefined;
  }
}

function parseTarget(target: string | undefined): Claim | undefined {
  if (target === undefined) return undefined;
  const id = target.slice(0, 36);
  if (!isUuid(id)) return undefined;
  const rest = target.slice(37);
  return {
    id,
    name: target.length > 37 ? Buffer.from(rest, 'base64url').toString() : undefined,
    ...(target[36] === KEPT_MARK ? { kept: true } : {}),
  };
}

export function nameTaken(name: string, holder: string): AgentError {
  return new AgentError(
    'VOLUME_NAME_EXISTS',
    `${VOLUME_NAME_EXISTS}\n"${name}" is held by volume ${holder}: choose another name, or set id = "${holder}" to update that volume`,
    { name, volumeId: holder },
  );
}
