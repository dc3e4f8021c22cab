import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { NotAProcessError } from '@dhv/sdk/host';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTempDir, tempDir } from './support/kit.js';
import { killAll, pidWrittenTo, recordedPids } from './support/processes.js';

/** The test kit's PID helpers never hand a test 0 or 1 to signal (kill(0) is the test's own process group). */

let dir: string;
beforeEach(async () => {
  dir = await tempDir('dhv-kit-pids-');
});
afterEach(async () => {
  await removeTempDir(dir);
});

describe('PIDs a plugin writes to a file', () => {
  it('waits out the empty file the shell makes before it writes', async () => {
    const file = join(dir, 'plugin.pid');
    await writeFile(file, ''); // `echo $$ > file`, caught between its open and its write
    setTimeout(() => void writeFile(file, '4242\n'), 50);
    expect(await pidWrittenTo(file)).toBe(4242);
  });

  it('gives up with what the file held, never 0', async () => {
    const file = join(dir, 'plugin.pid');
    await writeFile(file, '0\n');
    await expect(pidWrittenTo(file, 100)).rejects.toThrow(/no PID written to .* \(it holds "0\\n"\)/);
  });

  it('reads only whole lines of a pid list, and no 0 or 1', async () => {
    const file = join(dir, 'fixture.pids');
    await writeFile(file, '1234\n0\n1\n56');
    expect(await recordedPids(file)).toEqual([1234]);
  });

  it('refuses to signal 0 or 1, after signalling the rest', () => {
    expect(() => killAll([0, 1])).toThrow(NotAProcessError);
  });
});
