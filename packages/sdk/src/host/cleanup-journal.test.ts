import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { finishOrphanedJournals } from './cleanup-journal.js';
import { removeTempDir, tempDir, REPO_ROOT } from '../../../../test/support/kit.js';

const run = promisify(execFile);
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('a plugin that exited is struck off the journal without a write of its own', () => {
  it('is still listed until the next change, and a later dhv that finishes the journal says nothing of it', async () => {
    const dir = await tempDir('journal');
    cleanups.push(() => removeTempDir(dir));
    const journalDir = join(dir, 'journal');
    // A dhv process in small: a folder, a plugin that ran and exited, then killed outright
    // before it could clean up.
    const script = `
      import { spawn } from 'node:child_process';
      import { CleanupJournal } from '@dhv/sdk/host';
      const journal = CleanupJournal.forThisProcess();
      const { path } = await journal.makeFolder(${JSON.stringify(dir)}, 'made-');
      const done = spawn('/bin/sleep', ['600'], { detached: true, stdio: 'ignore' });
      journal.recordProcessGroup(done.pid);
      const exited = new Promise((resolve) => done.on('exit', resolve));
      done.kill('SIGKILL');
      await exited;
      journal.forgetProcessGroup(done.pid);
      console.log(JSON.stringify({ path, done: done.pid }));
      process.kill(process.pid, 'SIGKILL');
    `;
    const child = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: REPO_ROOT,
      env: { ...process.env, DHV_CLEANUP_JOURNAL: journalDir },
    }).catch((err: { stdout: string }) => err);
    const made = JSON.parse(child.stdout) as { path: string; done: number };
    const [file] = await readdir(journalDir);
    const listed = JSON.parse(await readFile(join(journalDir, file!), 'utf8')) as { entries: unknown[] };
    // The group that exited is still on disk: its exit was not a write.
    expect(listed.entries).toContainEqual(expect.objectContaining({ kind: 'process-group', pgid: made.done }));

    const before = process.env.DHV_CLEANUP_JOURNAL;
    process.env.DHV_CLEANUP_JOURNAL = journalDir;
    cleanups.push(async () => {
      if (before === undefined) delete process.env.DHV_CLEANUP_JOURNAL;
      else process.env.DHV_CLEANUP_JOURNAL = before;
    });
    const said = await finishOrphanedJournals();
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(`: removed ${made.path}`);
    expect(said[0]).not.toContain(`killed process group ${made.done}`);
    expect(await readdir(journalDir)).toEqual([]);
  });
});
