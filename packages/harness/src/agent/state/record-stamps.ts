import { lstatSync } from 'node:fs';

/**
 * A record file's identity and state, as the index keeps it beside what the file held:
 * inode, size and ctime in milliseconds (which nothing sets back; the nanoseconds a double
 * holds are enough to tell two writes apart), so any write, truncation or replacement since
 * shows. A file that is not there, or cannot be looked at, gets a stamp no file has.
 */
export function fileStampOf(file: string): [number, number, number] {
  try {
    const s = lstatSync(file, { throwIfNoEntry: false });
    if (s) return [s.ino, s.size, s.ctimeMs];
  } catch {
    // Told apart from any file below.
  }
  return [-1, -1, -1];
}

/**
 * Whether each record's file (`<dir><id>.json`) still has the stamp the index noted
 * (`stamps`: three numbers per record, as `fileStampOf` gives them). One `lstat` per record,
 * compared field by field: no string is made per file.
 */
export function filesUnchanged(dir: string, records: readonly { ID: string }[], stamps: readonly number[]): boolean {
  try {
    for (let i = 0; i < records.length; i++) {
      const s = lstatSync(`${dir}${records[i]!.ID}.json`, { throwIfNoEntry: false });
      if (!s || s.ino !== stamps[3 * i] || s.size !== stamps[3 * i + 1] || s.ctimeMs !== stamps[3 * i + 2])
        return false;
    }
  } catch {
    return false;
  }
  return true;
}

/** Whether two stamps (as `fileStampOf` gives them) are of the same file as it was. */
export function sameStamp(a: readonly number[], b: readonly number[]): boolean {
  return a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[0] !== -1;
}
