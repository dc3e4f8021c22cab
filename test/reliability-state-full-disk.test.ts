import { execFileSync } from 'node:child_process';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { skipRootTests, runDhv, tempDir, removeTempDir } from './support/kit.js';
import { mountLoopDisk, releaseLoopDisk, type LoopDisk } from './support/loop-disk.js';
import { snapshotTree } from './support/tree-snapshot.js';
import { EVERY_NAME_LOCK } from '../packages/harness/src/agent/state/agent-lock.js';

/**
 * Crashes and lost writes: client state written to a full disk. The data dir
 * is a tiny loop-mounted ext4 filesystem, filled up but for a few blocks: enough for the
 * name's lock and claim, not for the volume's record. The create must fail with a clear
 * error, the volume the plugin made must be deleted again (the agent's rule), and the
 * state already there must be exactly as it was.
 */

let sandbox: string;
let dataDir: string;
let volumesDir: string;
let flags: string[];
let disk: LoopDisk | undefined;

beforeEach(async () => {
  sandbox = await tempDir('state-full');
  dataDir = join(sandbox, 'data');
  volumesDir = join(sandbox, 'volumes');
  await mkdir(dataDir);
  await mkdir(volumesDir);
  // 1 KiB blocks and no reserved blocks, so "full" means full, for root too.
  disk = mountLoopDisk(join(sandbox, 'data.img'), dataDir, 8 * 1024 * 1024, ['-m', '0', '-b', '1024']);
  flags = ['--data-dir', dataDir, '--volumes-dir', volumesDir];
});

afterEach(async () => {
  if (disk) releaseLoopDisk(disk);
  disk = undefined;
  await removeTempDir(sandbox);
});

/** A spec of the built-in mkdir; `padding` makes its record that much larger (a constraint this node meets whatever it holds). */
async function spec(name: string, padding = ''): Promise<string> {
  const file = join(sandbox, `${name}.hcl`);
  const constraint = padding
    ? `constraint {\n  attribute = "\${attr.kernel.name}"\n  operator = "!="\n  value = "${padding}"\n}\n`
    : '';
  await writeFile(file, `type = "host"\nname = "${name}"\nplugin_id = "mkdir"\n${constraint}`);
  return file;
}

/** Fills the filesystem at `dir`, then frees `keepKiB` KiB, which small files can still use. */
async function fillLeaving(dir: string, keepKiB: number): Promise<void> {
  const reserve = join(dir, 'reserve');
  await mkdir(reserve);
  for (let i = 0; i < keepKiB; i++) await writeFile(join(reserve, String(i)), Buffer.alloc(1024, 1));
  try {
    execFileSync('/bin/sh', ['-c', `/usr/bin/head -c 67108864 /dev/zero > ${join(dir, 'ballast')}`], {
      stdio: 'ignore',
    });
  } catch {
    // ENOSPC is the point
  }
  await rm(reserve, { recursive: true });
}

describe.skipIf(skipRootTests('client state on a full disk'))('client state on a full disk', () => {
  it('fails the create with a clear error, deletes what the plugin made, and keeps the previous state intact', async () => {
    const first = await runDhv(['volume', 'create', await spec('first'), '--json', ...flags]);
    expect(first.exitCode, first.stderr).toBe(0);
    const firstId = (JSON.parse(first.stdout) as { Volume: { ID: string } }).Volume.ID;
    const stateDir = join(dataDir, 'client', 'host_volumes');
    const stateBefore = await snapshotTree(stateDir);
    // A record far larger than the room left, so the state write is what fails.
    const big = await spec('second', 'n'.repeat(60_000));
    await fillLeaving(dataDir, 24);

    const second = await runDhv(['volume', 'create', big, '--json', ...flags]);

    expect(second.exitCode).toBe(1);
    const error = (JSON.parse(second.stderr) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('STATE_WRITE_FAILED');
    expect(error.message).toMatch(/could not save volume .* to client state .*: .*(ENOSPC|no space left)/i);
    expect(await snapshotTree(stateDir)).toEqual(stateBefore);
    expect((await readdir(volumesDir)).sort()).toEqual([firstId]);
    const status = await runDhv(['volume', 'status', '--json', ...flags]);
    expect(status.exitCode, status.stderr).toBe(0);
    expect((JSON.parse(status.stdout) as Array<{ ID: string }>).map((v) => v.ID)).toEqual([firstId]);

    await rm(join(dataDir, 'ballast'));
    const again = await runDhv(['volume', 'create', big, '--json', ...flags]);
    expect(again.exitCode, again.stderr).toBe(0);
  }, 120_000);

  it('can still be freed when full: volume delete and node status work, agent restart says the disk is full, and no lock file is left', async () => {
    const created = JSON.parse((await runDhv(['volume', 'create', await spec('keep'), '--json', ...flags])).stdout) as {
      Volume: { ID: string };
    };
    const id = created.Volume.ID;
    await fillLeaving(dataDir, 0);

    const status = await runDhv(['node', 'status', '--json', ...flags]);
    expect(status.exitCode, status.stderr).toBe(0);
    // A restart may find room for its small files (ext4 keeps a few blocks in hand); when it does not, it says why.
    const restart = await runDhv(['agent', 'restart', ...flags]);
    if (restart.exitCode !== 0) expect(restart.stderr).toMatch(/no space left on device[^]*is full/i);

    const deleted = await runDhv(['volume', 'delete', id, '--json', ...flags]);
    expect(deleted.exitCode, deleted.stderr).toBe(0);
    expect(JSON.parse((await runDhv(['volume', 'status', '--json', ...flags])).stdout)).toEqual([]);
    // No name's lock is left; the lock of every name is one file that stays (docs/reliability.md).
    const locks = await readdir(join(dataDir, 'client', 'locks')).catch(() => [] as string[]);
    expect(locks.filter((name) => name !== EVERY_NAME_LOCK)).toEqual([]);
  });
});
