import { randomBytes } from 'node:crypto';
import { accessSync, constants, mkdirSync, rmSync } from 'node:fs';
import { mkdir, readFile, readdir, realpath, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotAProcessError, processStartTicks, signalRecordedGroup, stoppedRunning } from '../helpers/signals.js';
import { releaseEverythingBelow } from './teardown.js';
import { volumesDiskFoldersBelow } from './volumes-disk.js';
import { replaceFileSync } from '../helpers/replace-file.js';
import { JournalRewrite } from './journal-rewrite.js';

/**
 * One cleanup journal for everything a dhv process makes on the host that must not
 * outlive it: its scratch folders (with what is mounted or attached below them, and the
 * reference plugins' records of the volumes dirs in them) and the process groups of the
 * plugins it runs. Each is recorded before it is made (a process group as soon as it has
 * an ID) and struck off once released. A process killed outright (`kill -9`) leaves its
 * journal; the next dhv command finishes it, acting only on what it lists, and says so.
 *
 * The journal is one small JSON file per process, `<dir>/<pid>-<start time>.json`, where
 * `<dir>` is `$DHV_CLEANUP_JOURNAL`, else `/var/lib/dhv/cleanup-journal` as root, else
 * `~/.local/state/dhv/cleanup-journal`. A file whose process still runs is never touched.
 */

/** The plugins whose records of a volumes dir a folder's cleanup forgets. */
const RECORDING_PLUGINS = ['dhv-mkdir', 'dhv-loopback'];

type Entry =
  { kind: 'folder'; path: string; canonical?: string } | { kind: 'process-group'; pgid: number; startTime: string };

interface JournalFile {
  pid: number;
  startTime: string;
  command: string;
  entries: Entry[];
}

export function cleanupJournalDir(): string {
  const given = process.env.DHV_CLEANUP_JOURNAL;
  if (given !== undefined && given !== '') return given;
  if (process.getuid?.() === 0) return '/var/lib/dhv/cleanup-journal';
  // A user with no writable home (nobody's is /nonexistent) keeps its journal in its own folder under the temp dir.
  const home = homedir();
  try {
    accessSync(home, constants.W_OK);
    return join(home, '.local/state/dhv/cleanup-journal');
  } catch {
    return join(tmpdir(), `dhv-cleanup-journal-${process.getuid?.() ?? 'user'}`);
  }
}

/** The start time of a process (clock ticks since boot, /proc/<pid>/stat field 22): with the PID, who it is. */
/** A process's start time as the journal keeps it: its start in clock ticks since boot, as text. */
function startTimeOf(pid: number): string | undefined {
  const ticks = processStartTicks(pid);
  return ticks === undefined ? undefined : String(ticks);
}

/** This process's journal; every change is written (atomically) before the thing it records is made. */
export class CleanupJournal {
  private readonly entries: Entry[] = [];
  private readonly file: string;
  /** This process's own start time, read once: a save per plugin run (hundreds in a `dhv check`) need not read it again. */
  private readonly startTime: string;
  /** Whether its folder was made (once; again only if it was removed). */
  private dirMade = false;
  /** The file once written whole, open for the next versions to be written over it. */
  private readonly rewrite = new JournalRewrite();

  private constructor(
    private readonly dir: string,
    private readonly command: string,
  ) {
    this.startTime = startTimeOf(process.pid) ?? '0';
    this.file = join(dir, `${process.pid}-${this.startTime}.json`);
  }

  private static current: CleanupJournal | undefined;

  /** The journal of this process (made on first use). */
  static forThisProcess(command = process.argv.slice(1).join(' ')): CleanupJournal {
    CleanupJournal.current ??= new CleanupJournal(cleanupJournalDir(), command);
    return CleanupJournal.current;
  }

  /**
   * Makes a new folder `<parent>/<prefix>XXXXXX`, recorded before it exists, and returns
   * it with its canonical path (resolved now, before any plugin runs in it).
   */
  async makeFolder(parent: string, prefix: string): Promise<{ path: string; canonical: string }> {
    for (;;) {
      const path = join(parent, `${prefix}${randomBytes(6).toString('base64url').replace(/[-_]/g, 'x')}`);
      const entry: Entry = { kind: 'folder', path };
      this.add(entry);
      try {
        await mkdir(path, { mode: 0o700 });
      } catch (err) {
        this.strike(entry);
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw err;
      }
      const canonical = await realpath(path);
      entry.canonical = canonical;
      this.save();
      return { path, canonical };
    }
  }

  /** Unmounts, detaches and removes a folder made by makeFolder, forgets the plugins' records in it, then strikes it off. */
  async removeFolder(path: string): Promise<string[]> {
    const entry = this.entries.find(
      (e): e is Extract<Entry, { kind: 'folder' }> => e.kind === 'folder' && e.path === path,
    );
    const problems = await releaseFolder(path, entry?.canonical);
    if (entry !== undefined && problems.length === 0) this.strike(entry);
    return problems;
  }

  /** Records a plugin's process group the moment it has an ID; `forgetProcessGroup` once it is gone. */
  recordProcessGroup(pgid: number): void {
    const startTime = startTimeOf(pgid);
    if (startTime === undefined) return;
    this.add({ kind: 'process-group', pgid, startTime });
  }

  /**
   * Strikes the group off in memory only, unless nothing else is listed: the next write
   * carries it. A group listed after it is gone is harmless (a release checks its start
   * time before it signals), and a `dhv check` runs hundreds of plugins, each of whose
   * exits would otherwise be a write and a rename on disk.
   */
  forgetProcessGroup(pgid: number): void {
    const at = this.entries.findIndex((e) => e.kind === 'process-group' && e.pgid === pgid);
    if (at === -1) return;
    this.entries.splice(at, 1);
    if (this.entries.length === 0) this.save();
  }

  /** The journal of this process if one was made, to release on a way out nothing else cleaned up. */
  static ofThisProcess(): CleanupJournal | undefined {
    return CleanupJournal.current;
  }

  /**
   * Releases everything still listed: kills the process groups, then releases and removes
   * the folders, striking each off once gone. What a way out that skipped the command's
   * own cleanup (an uncaught exception) runs; returns what could not be released.
   */
  async releaseAll(): Promise<string[]> {
    this.killProcessGroups();
    for (const entry of this.entries.filter((e) => e.kind === 'process-group')) this.strike(entry);
    const problems: string[] = [];
    for (const entry of this.entries.filter((e) => e.kind === 'folder'))
      problems.push(...(await this.removeFolder(entry.path)));
    return problems;
  }

  /** Kills every recorded process group still running (the faster way out). */
  killProcessGroups(): void {
    for (const entry of this.entries) if (entry.kind === 'process-group') killGroup(entry.pgid, entry.startTime);
  }

  private add(entry: Entry): void {
    this.entries.push(entry);
    this.save();
  }

  private strike(entry: Entry): void {
    const at = this.entries.indexOf(entry);
    if (at !== -1) this.entries.splice(at, 1);
    this.save();
  }

  /**
   * Writes the journal (or removes it when empty), synchronously: a few hundred bytes, and
   * a process group is on disk before the plugin can do anything worth cleaning up. The
   * first version is a new file; the next are written over it in place (JournalRewrite).
   */
  private save(): void {
    if (this.entries.length === 0) {
      this.rewrite.close();
      rmSync(this.file, { force: true });
      return;
    }
    const doc: JournalFile = {
      pid: process.pid,
      startTime: this.startTime,
      command: this.command,
      entries: this.entries,
    };
    const text = JSON.stringify(doc);
    if (this.rewrite.write(text)) return;
    const write = () => {
      replaceFileSync(this.file, text);
      this.rewrite.opened(this.file, text);
    };
    try {
      if (!this.dirMade) mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      this.dirMade = true;
      write();
    } catch (err) {
      // Its folder removed under it (a test's temp dir): made again.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      write();
    }
  }
}

/**
 * An exception or rejection nothing caught ends the process only after this process's
 * journal is released (Node would otherwise exit at once, leaving it to the next dhv
 * command): `say` gets the error and what could not be released, then the exit is 1, as
 * Node's own for an uncaught exception.
 */
export function releaseJournalOnCrash(say: (line: string) => void): void {
  let crashed = false;
  const onCrash = (err: unknown) => {
    if (crashed) return;
    crashed = true;
    say(`internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    const journal = CleanupJournal.ofThisProcess();
    void (journal ? journal.releaseAll() : Promise.resolve([]))
      .then((left) => {
        for (const problem of left) say(`could not release: ${problem}`);
      })
      .catch((releaseErr: unknown) => say(`could not release what this run made: ${String(releaseErr)}`))
      .finally(() => process.exit(1));
  };
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
}

/** How long the finisher waits for the groups it killed to go before it releases their folders. */
const KILLED_GONE_MS = 2_000;

/**
 * Kills a process group only while it is the one recorded; a journal entry naming no group
 * (damaged) is passed over. Whether the group was there to kill.
 */
function killGroup(pgid: number, startTime: string): boolean {
  try {
    return signalRecordedGroup(pgid, Number(startTime), 'SIGKILL');
  } catch (err) {
    if (!(err instanceof NotAProcessError)) throw err;
    return false;
  }
}

async function releaseFolder(path: string, canonical: string | undefined): Promise<string[]> {
  const problems = await releaseEverythingBelow(path, canonical);
  const where = canonical ?? path;
  for (const plugin of RECORDING_PLUGINS)
    for (const { folder } of await volumesDiskFoldersBelow(plugin, where))
      await rm(folder, { recursive: true, force: true }).catch((err: Error) => problems.push(err.message));
  if (problems.length > 0) return problems;
  try {
    await rm(path, { recursive: true, force: true, maxRetries: 3 });
  } catch (err) {
    problems.push(`could not remove ${path}: ${(err as Error).message}`);
  }
  return problems;
}

/**
 * Finishes the journals of dhv processes that died without finishing them (killed
 * outright): kills their recorded process groups, then releases and removes their
 * folders. Returns one line a finished journal, saying what was done.
 */
export async function finishOrphanedJournals(): Promise<string[]> {
  const dir = cleanupJournalDir();
  const said: string[] = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.endsWith('.json')) continue;
    const file = join(dir, name);
    let doc: JournalFile;
    try {
      doc = JSON.parse(await readFile(file, 'utf8')) as JournalFile;
    } catch {
      continue;
    }
    if (doc.pid === process.pid || startTimeOf(doc.pid) === doc.startTime) continue;
    const done: string[] = [];
    const problems: string[] = [];
    const killed: number[] = [];
    for (const entry of doc.entries) {
      if (entry.kind !== 'process-group') continue;
      // A group struck off in memory only (forgetProcessGroup) may be listed long gone: not said.
      if (!killGroup(entry.pgid, entry.startTime)) continue;
      killed.push(entry.pgid);
      done.push(`killed process group ${entry.pgid}`);
    }
    // A SIGKILL takes effect after it is sent: the folders are released once the groups' leaders are gone.
    await stoppedRunning(killed, KILLED_GONE_MS);
    for (const entry of doc.entries) {
      if (entry.kind !== 'folder') continue;
      const left = await releaseFolder(entry.path, entry.canonical);
      if (left.length === 0) done.push(`removed ${entry.path}`);
      problems.push(...left);
    }
    if (problems.length === 0) await rm(file, { force: true });
    said.push(
      `finished the cleanup of \`${doc.command}\` (process ${doc.pid}, killed before it could): ${done.join(', ') || 'nothing was left'}` +
        (problems.length > 0 ? `; could not: ${problems.join('; ')} (the journal ${file} is kept)` : ''),
    );
  }
  return said;
}
