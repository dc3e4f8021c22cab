import { closeSync, constants, fstatSync, openSync, writeSync } from 'node:fs';

/** The most a rewrite in place writes: one page, which a write at offset 0 makes in one step. */
const ONE_PAGE = 4096;

/**
 * The cleanup journal's file kept open once written whole, so that its next versions are
 * written over it in place, one `pwrite` at offset 0 padded with spaces to the length of
 * what it replaces (JSON allows whitespace after the document), rather than as a new file
 * renamed over it: a `dhv check` records hundreds of process groups, and each new file was
 * an inode made and one freed, and a rename, on the journal's disk.
 *
 * As safe against a kill: Linux checks for a fatal signal only between the pages of a
 * write, so a write within one page is made whole or not at all, and a later reader finds
 * the old document or the new one, as after a rename. A reader while the write is under
 * way may see part of each; it reads only to finish the journals of dead processes, and
 * this one is alive. More than a page, or a file no longer at its path, is written whole.
 */
export class JournalRewrite {
  private fd: number | undefined;
  /** The bytes the file holds now: what a shorter document is padded to. */
  private length = 0;

  /** Writes `text` over the file in place; false when it cannot, and the caller writes it whole. */
  write(text: string): boolean {
    if (this.fd === undefined) return false;
    const size = Buffer.byteLength(text);
    if (size > ONE_PAGE) return false;
    // A file removed under it (its folder removed) is written whole again, where it can be found.
    if (fstatSync(this.fd).nlink === 0) {
      this.close();
      return false;
    }
    const bytes = Buffer.alloc(Math.max(size, this.length), ' ');
    bytes.write(text);
    if (bytes.length > ONE_PAGE) return false;
    if (writeSync(this.fd, bytes, 0, bytes.length, 0) !== bytes.length) {
      this.close();
      return false;
    }
    this.length = bytes.length;
    return true;
  }

  /** Keeps the file just written whole at `path` open, for the next versions to be written over it. */
  opened(path: string, text: string): void {
    this.close();
    try {
      this.fd = openSync(path, constants.O_WRONLY | constants.O_NOFOLLOW);
      this.length = Buffer.byteLength(text);
    } catch {
      // The next version is written whole again.
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
    this.fd = undefined;
  }
}
