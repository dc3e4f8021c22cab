import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireVolumeLock } from '@dhv/sdk';
import { lockHolder } from './holder-processes.js';

describe('lockHolder', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dhv-holder-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads the PID a volume lock wrote into its file, so a waiter can see whether its keeper is stopped', async () => {
    const path = join(dir, 'door.lock');
    const release = await acquireVolumeLock(path);
    try {
      expect(lockHolder(path)).toBe(process.pid);
    } finally {
      await release();
    }
  });

  it('names no one for a file without a holder note', async () => {
    const path = join(dir, 'other.lock');
    await writeFile(path, '123\n');
    expect(lockHolder(path)).toBeUndefined();
    expect(lockHolder(join(dir, 'missing.lock'))).toBeUndefined();
  });
});
