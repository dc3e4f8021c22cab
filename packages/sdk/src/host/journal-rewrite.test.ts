import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { replaceFileSync } from '../helpers/replace-file.js';
import { JournalRewrite } from './journal-rewrite.js';

let dir: string;
let path: string;
let rewrite: JournalRewrite;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dhv-journal-rewrite-'));
  path = join(dir, 'journal.json');
  rewrite = new JournalRewrite();
});
afterEach(async () => {
  rewrite.close();
  await rm(dir, { recursive: true, force: true });
});

const doc = (groups: number[]) => JSON.stringify({ pid: 1, entries: groups.map((pgid) => ({ pgid })) });

/** Writes `text` as the journal does: in place when it can, else whole (and then kept open). */
function save(text: string): 'in place' | 'whole' {
  if (rewrite.write(text)) return 'in place';
  replaceFileSync(path, text);
  rewrite.opened(path, text);
  return 'whole';
}

describe("the cleanup journal's file, written over in place", () => {
  it('is written whole first, then over the same file, each version read back as exactly its document', async () => {
    expect(save(doc([10, 11, 12]))).toBe('whole');
    const { ino } = await stat(path);
    for (const groups of [[10, 11], [10, 11, 12, 13, 14], [14], [14, 15]]) {
      expect(save(doc(groups))).toBe('in place');
      expect(JSON.parse(await readFile(path, 'utf8'))).toEqual(JSON.parse(doc(groups)));
    }
    expect((await stat(path)).ino).toBe(ino);
    // Padded to the longest version, never past it.
    expect((await stat(path)).size).toBe(doc([10, 11, 12, 13, 14]).length);
  });

  it('writes a document longer than a page whole, and one removed under it whole again', async () => {
    save(doc([1]));
    const long = doc(Array.from({ length: 500 }, (_, i) => 100_000 + i));
    expect(long.length).toBeGreaterThan(4096);
    expect(save(long)).toBe('whole');
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual(JSON.parse(long));
    expect(save(doc([2]))).toBe('whole'); // the file now is longer than a page: replaced, not padded
    expect(save(doc([3]))).toBe('in place');

    await rm(path);
    expect(rewrite.write(doc([4]))).toBe(false);
    expect(save(doc([4]))).toBe('whole');
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual(JSON.parse(doc([4])));
  });
});
