import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { CROWD_MOUNTS, crowding, crowdedWords } from './crowded-table.js';

const asRoot = process.getuid?.() === 0;
const mountsOf = async () => (await readFile('/proc/self/mountinfo', 'utf8')).split('\n').filter(Boolean);

describe('a crowded mount table', () => {
  let dir = '';
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it.skipIf(!asRoot)(
    "runs the program with its argv and environment alone, under the host's mounts and 40 more, and leaves the host's table as it was",
    async () => {
      dir = await mkdtemp(join(tmpdir(), 'dhv-crowded-'));
      const run = async (program: string, argv: string[]) => {
        const crowded = (await crowding(join(dir, basename(program)), program))!;
        const env = { DHV_OPERATION: 'create' };
        return { crowded, stdout: (await promisify(execFile)(crowded.executable, argv, { env })).stdout };
      };
      expect((await run('/usr/bin/env', [])).stdout).toBe('DHV_OPERATION=create\n');
      expect((await run('/bin/echo', ['create'])).stdout).toBe('create\n');
      const { crowded, stdout } = await run('/bin/cat', ['/proc/self/mounts']);
      expect(stdout.split('\n').filter((line) => line.includes(dir))).toHaveLength(CROWD_MOUNTS);
      expect(crowded.tableBytes).toBeGreaterThan(4096);
      expect((await mountsOf()).filter((line) => line.includes(dir))).toEqual([]);
    },
  );

  it('is named in a verdict by its size and what makes it on a real client', () => {
    expect(crowdedWords(9 * 1024 + 100)).toBe(
      'under a mount table of 9 KiB (40 extra mounts, as task tmpfs and secrets mounts make on a real client)',
    );
  });
});
