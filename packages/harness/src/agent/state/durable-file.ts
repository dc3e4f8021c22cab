import { closeSync, constants, fstatSync, openSync, readFileSync, readSync, type Stats } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { runTool } from '@dhv/sdk';
import { replaceFile, signalProcess } from '@dhv/sdk/host';

/** Replaces a file whole and durably (replaceFile), and counts the change for the crash tests. */
export async function writeFileDurably(path: string, contents: string, mode = 0o600): Promise<void> {
  await replaceFile(path, contents, { mode, durable: true });
  durableStep();
}

let durableSteps = 0;

/**
 * Marks one durable change of the store done (a file renamed into place, one unlinked, a
 * claim linked). For the crash tests alone: with `$DHV_TEST_KILL_AT_STEP` = N the process
 * kills itself (SIGKILL) right after its Nth change, so a test can walk every point of a
 * transition one by one instead of killing at random instants.
 */
export function durableStep(): void {
  durableSteps++;
  const at = process.env.DHV_TEST_KILL_AT_STEP;
  if (at !== undefined && Number(at) === durableSteps) signalProcess(process.pid, 'SIGKILL');
}

/**
 * The same without a single fsync, for many files written at once (a restore's name
 * claims): a crash leaves the old contents, the new ones or none, until
 * `syncFileSystemOf` has run.
 */
export async function writeFileAtomically(path: string, contents: string, mode = 0o600): Promise<void> {
  await replaceFile(path, contents, { mode });
}

/** Flushes everything written to the file system that holds `path` (one `sync -f`, not an fsync per file). */
export async function syncFileSystemOf(path: string): Promise<void> {
  await runTool('sync', ['-f', path], { debianPackage: 'coreutils' });
}

/** Removes a file and makes the removal durable; a file already gone is fine. */
export async function removeFileDurably(path: string): Promise<boolean> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  await syncDirectory(dirname(path));
  durableStep();
  return true;
}

export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A state file that is not a regular file (a FIFO would block a plain read forever). */
export class NotARegularFileError extends Error {
  readonly code = 'ENOTREGULAR';
  constructor(
    readonly path: string,
    what: string,
  ) {
    super(`${path} is ${what}, not a regular file`);
    this.name = 'NotARegularFileError';
  }
}

// O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer. O_NOFOLLOW: a
// state file planted as a symbolic link is refused, so another file's bytes never reach an error.
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

function refusedLink(path: string, err: unknown): never {
  if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new NotARegularFileError(path, 'a symbolic link');
  throw err;
}

function describe(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'not a plain file';
}

/** Reads a file that must be a regular one, never blocking on a FIFO or device. */
export async function readRegularFile(path: string): Promise<string> {
  const handle = await open(path, READ_FLAGS).catch((err: unknown) => refusedLink(path, err));
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new NotARegularFileError(path, describe(stats));
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * Reads a regular file synchronously, as `readRegularFile` refuses a link, a FIFO or a
 * folder: `read` gets the open descriptor and its size.
 */
function withRegularFileSync(path: string, read: (fd: number, size: number) => string): string {
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch (err) {
    refusedLink(path, err);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new NotARegularFileError(path, describe(stats));
    return read(fd, stats.size);
  } finally {
    closeSync(fd);
  }
}

/**
 * The same, synchronously, for one large file a command reads once and needs before it
 * can go on (the node's facts): one read instead of the chunks of an asynchronous one.
 */
export function readRegularFileSync(path: string): string {
  return withRegularFileSync(path, (fd) => readFileSync(fd, 'utf8'));
}

/** One buffer for every small state file read synchronously: reading thousands of them allocates nothing per file. */
let scratch = Buffer.allocUnsafe(64 * 1024);

/**
 * A regular file's text, read synchronously for the many small files a restore reads (a
 * link, a FIFO or a folder refused as `readRegularFile` refuses them): one open, one fstat and
 * (for a file that fits) one read into a buffer reused across calls, so 10,000 records
 * cost 10,000 strings and nothing else for the garbage collector.
 */
export function readSmallRegularFileSync(path: string): string {
  return withRegularFileSync(path, (fd, size) => {
    // One byte more than the size says, so a file that grew since is seen and read whole.
    if (size + 1 > scratch.length) scratch = Buffer.allocUnsafe(Math.max(size + 1, scratch.length * 2));
    const read = readSync(fd, scratch, 0, scratch.length, 0);
    if (read === scratch.length) return readFileSync(fd, 'utf8');
    return scratch.toString('utf8', 0, read);
  });
}
