import { constants, type Stats } from 'node:fs';
import { close, fstat, lstat, mkdir, open, readFile, unlink, writeFile } from './fs-calls.js';
import { read as readCallback, write as writeCallback } from 'node:fs';
import { promisify } from 'node:util';
import { dirname } from 'node:path';
import { formatDeviceNumber } from './device-number.js';
import { PluginFailure } from './errors.js';
import { findTool, loadChildProcess, TOOL_ENV } from './system-tools.js';

/**
 * A per-volume lock between processes, for plugins killed at any instant (the agent
 * sends SIGKILL at its deadline).
 *
 * Invariant: a process holds the lock only while it holds an exclusive flock(2) on the
 * inode the lock path names, and only a holder unlinks that path (just before letting go).
 * A shared holder (`shared`) holds a shared flock on that inode and never unlinks the path,
 * so shared holders exclude only exclusive ones.
 * The kernel drops an flock when the last descriptor of its open file closes, so a
 * holder's death releases the lock; nothing is ever judged stale by time or by PID.
 *
 * Node has no flock call, so `flock(1)` (util-linux, busybox) places it: it inherits our
 * descriptor as fd 3, locks that open file, and exits; the lock stays with the open file
 * this process still holds. The child blocks in the kernel while waiting: no polling.
 *
 * Provenance: every lock file this lock makes starts with `LOCK_MARK`, written by the
 * process that created it, and every holder's note starts with it too. Only a marked file
 * nobody holds (no flock, no fcntl or OFD lock in /proc/locks) is ever removed by
 * `removeFreeLock`: a `*.lock` another program made, or holds with fcntl(2), is left alone.
 */

/** The first bytes of every lock file dhv makes: what `removeFreeLock` requires before it unlinks one. */
const LOCK_MARK = 'dhv-lock ';

export interface LockOptions {
  signal?: AbortSignal;
  /**
   * Makes the lock file's folder (only that folder, never its parents) with this mode
   * when it is missing, also when another process removed it while this one waited.
   */
  folderMode?: number;
  /** Held together with other shared holders, never with an exclusive one. */
  shared?: boolean;
  /**
   * Takes the lock only while this process runs: it waits on an open file of its own that
   * its flock(1) child alone holds (which lets go as it exits), then takes the lock itself
   * without waiting. So a waiter stopped (SIGSTOP, Ctrl-Z) or killed never becomes a
   * holder, and never keeps anyone out.
   */
  onlyWhileRunning?: boolean;
}

export async function withVolumeLock<T>(lockPath: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const release = await acquireVolumeLock(lockPath, options);
  try {
    return await fn();
  } finally {
    await release();
  }
}

export async function acquireVolumeLock(lockPath: string, options: LockOptions = {}): Promise<() => Promise<void>> {
  const flock = findTool('flock', 'util-linux');
  for (;;) {
    if (options.signal?.aborted) throw await gaveUp(lockPath);
    const fd = await openLockFile(lockPath, options);
    const shared = options.shared === true;
    const polite = options.onlyWhileRunning === true;
    let locked: boolean;
    let held = false;
    try {
      locked = await lockOpenFile(flock, fd, lockPath, { tryOnly: polite, shared }, options.signal).then(
        () => true,
        (err: unknown) => {
          if (polite && !options.signal?.aborted && err instanceof PluginFailure && err.code === 'ELOCKED')
            return false;
          throw err;
        },
      );
      // A holder that let go unlinked the path first: the inode this process now locks
      // may be one nobody can find any more, and then it locks the path afresh.
      held = locked && sameFile(await fstat(fd), await lstat(lockPath).catch(() => undefined));
    } finally {
      if (!held) await close(fd);
    }
    if (!held) {
      if (!locked) await waitUntilFree(flock, lockPath, shared, options);
      continue;
    }
    if (options.shared) return once(() => close(fd));
    await writeHolder(fd);
    return once(async () => {
      await unlink(lockPath).catch(() => {});
      await close(fd);
    });
  }
}

/**
 * Removes a lock file left by a holder that died, when this lock made it (it starts with
 * `LOCK_MARK`) and nobody holds it in any way the kernel knows (flock, fcntl, OFD); the
 * start-up sweep and `dhv agent gc` call it. A waiter on it finds the path gone and locks
 * afresh. Returns whether it was removed.
 */
export async function removeFreeLock(lockPath: string): Promise<boolean> {
  return withFreeLock(lockPath, async () => {
    await unlink(lockPath);
    return true;
  });
}

/** Whether a lock file this lock made is there and nobody holds it, found by locking it without waiting and letting go. */
export async function isFreeLock(lockPath: string): Promise<boolean> {
  return withFreeLock(lockPath, async () => true);
}

async function withFreeLock(lockPath: string, fn: () => Promise<boolean>): Promise<boolean> {
  let fd: number;
  try {
    fd = await open(lockPath, constants.O_RDWR | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return false;
  }
  try {
    const stats = await fstat(fd);
    if (!stats.isFile() || !(await hasLockMark(fd))) return false;
    // Another program's fcntl lock does not stop flock(2): /proc/locks is asked first.
    if (await lockedInKernel(stats.dev, stats.ino)) return false;
    const free = await lockOpenFile(findTool('flock', 'util-linux'), fd, lockPath, {
      tryOnly: true,
      shared: false,
    }).then(
      () => true,
      () => false,
    );
    if (!free || !sameFile(await fstat(fd), await lstat(lockPath).catch(() => undefined))) return false;
    return await fn();
  } finally {
    await close(fd);
  }
}

/** Waits until the lock could be taken, on an open file only a flock(1) child holds: it lets go as it exits. */
async function waitUntilFree(flock: string, lockPath: string, shared: boolean, options: LockOptions): Promise<void> {
  const fd = await openLockFile(lockPath, options);
  await lockOpenFile(flock, fd, lockPath, { tryOnly: false, shared, handOver: true }, options.signal);
}

async function openLockFile(lockPath: string, options: LockOptions): Promise<number> {
  // O_NOFOLLOW: a link planted at the lock path is refused, never followed.
  const flags = constants.O_RDWR | constants.O_NOFOLLOW | constants.O_NONBLOCK;
  for (let attempt = 0; ; attempt++) {
    try {
      // Made here (O_EXCL), the file gets its mark before anyone can lock it; an existing one is opened as it is.
      const made = await open(lockPath, flags | constants.O_CREAT | constants.O_EXCL, 0o600).then(
        (fd) => fd,
        (err: NodeJS.ErrnoException) => (err.code === 'EEXIST' ? undefined : Promise.reject(err)),
      );
      if (made !== undefined) await markLockFile(made);
      const fd = made ?? (await open(lockPath, flags));
      const stats = await fstat(fd);
      if (!stats.isFile()) {
        await close(fd);
        throw lockPathRefused(lockPath, 'is not a regular file');
      }
      return fd;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') throw lockPathRefused(lockPath, 'is a symbolic link');
      // Gone between the two opens: its holder let go; open again.
      if (
        code === 'ENOENT' &&
        attempt < 10 &&
        (await lstat(dirname(lockPath)).then(
          () => true,
          () => false,
        ))
      )
        continue;
      if (code !== 'ENOENT' || options.folderMode === undefined || attempt >= 10) {
        if (err instanceof PluginFailure) throw err;
        throw new PluginFailure('ELOCKFILE', `could not open the lock file ${lockPath}: ${(err as Error).message}`, {
          path: lockPath,
        });
      }
      await mkdir(dirname(lockPath), { mode: options.folderMode }).catch((e: NodeJS.ErrnoException) => {
        if (e.code === 'EEXIST') return;
        throw new PluginFailure('ELOCKFILE', `could not make the folder of the lock file ${lockPath}: ${e.message}`, {
          path: lockPath,
        });
      });
    }
  }
}

const writeAt = promisify(writeCallback);
const readAt = promisify(readCallback);

/**
 * Writes the mark at the start of a lock file this process just made. A holder's note
 * starts with the same bytes, so the two writes racing leave the same file.
 */
async function markLockFile(fd: number): Promise<void> {
  try {
    await writeAt(fd, Buffer.from(LOCK_MARK), 0, LOCK_MARK.length, 0);
  } catch {
    // A full disk only costs the mark: gc then leaves the file alone.
  }
}

async function hasLockMark(fd: number): Promise<boolean> {
  const buffer = Buffer.alloc(LOCK_MARK.length);
  const { bytesRead } = await readAt(fd, buffer, 0, buffer.length, 0);
  return bytesRead === buffer.length && buffer.toString('latin1') === LOCK_MARK;
}

/**
 * Whether any process holds a lock of any kind (flock, POSIX fcntl, OFD, lease) on the
 * file with this `dev` and `ino`, as /proc/locks lists them (`major:minor:inode`, the
 * device in hex). Where /proc/locks cannot be read, it is assumed held.
 */
async function lockedInKernel(dev: number, ino: number): Promise<boolean> {
  const text = await readFile('/proc/locks', 'latin1').catch(() => undefined);
  if (text === undefined) return true;
  const wanted = `${formatDeviceNumber(dev)}:${ino}`;
  for (const match of String(text).matchAll(/ ([0-9a-f]+):([0-9a-f]+):([0-9]+) /g)) {
    const [, major, minor, inode] = match;
    if (`${Number.parseInt(major!, 16)}:${Number.parseInt(minor!, 16)}:${inode}` === wanted) return true;
  }
  return false;
}

function lockPathRefused(lockPath: string, what: string): PluginFailure {
  return new PluginFailure(
    'ELOCKFILE',
    `the lock file ${lockPath} ${what}; it is never followed or replaced: remove it`,
    { path: lockPath },
  );
}

/** Places an exclusive (or shared) flock on `fd`'s open file; with `tryOnly`, fails at once when it is held. */
async function lockOpenFile(
  flock: string,
  fd: number,
  lockPath: string,
  { tryOnly, shared, handOver = false }: { tryOnly: boolean; shared: boolean; handOver?: boolean },
  signal?: AbortSignal,
): Promise<void> {
  const { spawn } = await loadChildProcess();
  // No pipe for its stderr: reading one costs a create about 5 ms of CPU (a socket and
  // its streams), for a message flock(1) only prints when it cannot lock at all; and not
  // our stderr either, which an orphaned flock(1) of a killed waiter would keep open.
  const child = spawn(flock, [`-${shared ? 's' : 'x'}${tryOnly ? 'n' : ''}`, '3'], {
    stdio: ['ignore', 'ignore', 'ignore', fd],
    env: TOOL_ENV,
  });
  // Listened for at once: a child that finds the lock free may be gone within this turn.
  const exited = new Promise<[number | null, NodeJS.Signals | null | Error]>((resolve) => {
    child.once('error', (err) => resolve([null, err]));
    child.once('close', (status, killedBy) => resolve([status, killedBy]));
  });
  const onAbort = () => child.kill('SIGKILL');
  if (signal?.aborted) onAbort();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    // Handed over: the child's copy is the open file's last, so its lock ends with the child.
    if (handOver) await close(fd);
    const [code, how] = await exited;
    if (code === 0) return;
    // The child may have locked the open file just before it was killed; the caller
    // closes the handle, which lets go of that lock too.
    if (signal?.aborted) throw await gaveUp(lockPath);
    if (tryOnly && code === 1) throw new PluginFailure('ELOCKED', `the lock ${lockPath} is held`, { path: lockPath });
    const why = how instanceof Error ? how.message : how !== null ? `killed by ${how}` : `exit status ${code}`;
    throw new PluginFailure(
      'ELOCKFAILED',
      `flock on ${lockPath} failed (${why}); \`${flock} -x ${lockPath} true\` shows flock's own reason`,
      { path: lockPath },
    );
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/** The PID in a lock file's note (`dhv-lock <pid>`), or undefined when it names none. */
export function lockHolderPid(note: string): number | undefined {
  const holder = note.startsWith(LOCK_MARK) ? note.slice(LOCK_MARK.length).trim() : '';
  return /^[1-9][0-9]*$/.test(holder) ? Number(holder) : undefined;
}

async function gaveUp(lockPath: string): Promise<PluginFailure> {
  const holder = lockHolderPid(await readHolder(lockPath));
  const by = holder !== undefined ? `, held by process ${holder}` : '';
  return new PluginFailure('ELOCKED', `gave up waiting for the lock ${lockPath}${by}`, { path: lockPath });
}

/** The note `writeHolder` left, read without following a link or blocking on a FIFO. */
async function readHolder(lockPath: string): Promise<string> {
  try {
    const fd = await open(lockPath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      if (!(await fstat(fd)).isFile()) return '';
      return String(await readFile(fd, 'utf8'))
        .slice(0, 40)
        .trim();
    } finally {
      await close(fd);
    }
  } catch {
    return '';
  }
}

function sameFile(a: Stats, b: Stats | undefined): boolean {
  return b !== undefined && a.dev === b.dev && a.ino === b.ino;
}

/**
 * Says who holds the lock, for a waiter's error. Every note has the same length, so it
 * overwrites the last one whole. Best effort: a full disk only loses the note.
 */
async function writeHolder(fd: number): Promise<void> {
  try {
    await writeFile(fd, `${LOCK_MARK}${String(process.pid).padEnd(11)}\n`);
  } catch {
    // the lock holds without the note
  }
}

function once(release: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= release());
}
