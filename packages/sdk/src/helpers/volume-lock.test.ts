import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFile, rm, symlink, writeFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeFreeLock, withVolumeLock } from './volume-lock.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

// Other processes use the built module, as separate plugin processes would.
const BUILT = fileURLToPath(new URL('../../dist/helpers/volume-lock.js', import.meta.url));

let dir: string;
const children: ChildProcess[] = [];

beforeEach(async () => {
  dir = await tempDir('lock');
});

afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await removeTempDir(dir);
});

function node(script: string): ChildProcess {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return child;
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
const printed = (child: ChildProcess, text: string) =>
  new Promise<void>((resolve) =>
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes(text) && resolve()),
  );

/** Another process that takes the lock and keeps it until it is killed. */
async function lockHolder(lock: string): Promise<ChildProcess> {
  const holder = node(`
      import { acquireVolumeLock } from ${JSON.stringify(BUILT)};
      await acquireVolumeLock(${JSON.stringify(lock)});
      process.stdout.write('locked\\n');
      setInterval(() => {}, 1000);`);
  await printed(holder, 'locked');
  return holder;
}

describe('withVolumeLock', () => {
  it('lets one process at a time in', async () => {
    const lock = join(dir, 'vol.lock');
    const log = join(dir, 'log');
    const worker = `
      import { withVolumeLock } from ${JSON.stringify(BUILT)};
      import { appendFileSync } from 'node:fs';
      for (let i = 0; i < 3; i++) {
        await withVolumeLock(${JSON.stringify(lock)}, async () => {
          appendFileSync(${JSON.stringify(log)}, 'in ' + process.pid + '\\n');
          await new Promise((r) => setTimeout(r, 15));
          appendFileSync(${JSON.stringify(log)}, 'out ' + process.pid + '\\n');
        });
      }`;
    const workers = [node(worker), node(worker), node(worker), node(worker)];
    expect(await Promise.all(workers.map(exited))).toEqual([0, 0, 0, 0]);
    const lines = (await readFile(log, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(4 * 3 * 2);
    for (let i = 0; i < lines.length; i += 2) {
      const pid = lines[i]!.split(' ')[1];
      expect([lines[i], lines[i + 1]]).toEqual([`in ${pid}`, `out ${pid}`]);
    }
    expect(await readdir(dir)).toEqual(['log']); // no lock or token file left
  });

  it('waits while a live process holds the lock, and gives up when the signal aborts', async () => {
    const lock = join(dir, 'vol.lock');
    const holder = await lockHolder(lock);
    const err = await withVolumeLock(lock, async () => 'entered', { signal: AbortSignal.timeout(200) }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'ELOCKED', message: expect.stringContaining(`held by process ${holder.pid}`) });
  });

  it('takes the lock over from a holder that was killed with SIGKILL', async () => {
    const lock = join(dir, 'vol.lock');
    const holder = await lockHolder(lock);
    holder.kill('SIGKILL');
    await exited(holder);
    expect(await withVolumeLock(lock, async () => 'entered', { signal: AbortSignal.timeout(10_000) })).toBe('entered');
  });

  it('takes over a lock file a dead holder left, and never judges a live holder by its note', async () => {
    const lock = join(dir, 'vol.lock');
    await writeFile(lock, `${process.pid}\n`); // a live PID's note: only the kernel's lock counts
    expect(await withVolumeLock(lock, async () => 'entered', { signal: AbortSignal.timeout(10_000) })).toBe('entered');
    expect(await readdir(dir)).toEqual([]);
  });

  it('a free lock file a killed holder left is collectable; a held one, and a *.lock it did not make, are not', async () => {
    const lock = join(dir, 'vol.lock');
    const killed = await lockHolder(lock);
    killed.kill('SIGKILL');
    await exited(killed);
    expect(await removeFreeLock(lock)).toBe(true);
    expect(await readdir(dir)).toEqual([]);

    await writeFile(lock, ''); // nothing says dhv made it
    expect(await removeFreeLock(lock)).toBe(false);
    await rm(lock);

    await lockHolder(lock); // killed by afterEach
    expect(await removeFreeLock(lock)).toBe(false);
    expect(await readdir(dir)).toEqual(['vol.lock']);
  });

  it('refuses a symbolic link planted at the lock path, and never follows it', async () => {
    const lock = join(dir, 'vol.lock');
    await writeFile(join(dir, 'victim'), 'keep');
    await symlink(join(dir, 'victim'), lock);
    await expect(withVolumeLock(lock, async () => 'entered')).rejects.toMatchObject({
      code: 'ELOCKFILE',
      message: expect.stringContaining('symbolic link'),
    });
    expect(await readFile(join(dir, 'victim'), 'utf8')).toBe('keep');
  });

  it('does not block on a FIFO planted at the lock path', async () => {
    const lock = join(dir, 'vol.lock');
    execFileSync('mkfifo', [lock]);
    await expect(withVolumeLock(lock, async () => 'entered')).rejects.toMatchObject({
      code: 'ELOCKFILE',
      message: expect.stringContaining('not a regular file'),
    });
  });

  it('makes only the missing lock folder when asked, never its parents', async () => {
    await expect(
      withVolumeLock(join(dir, 'a', 'b', 'vol.lock'), async () => 'entered', { folderMode: 0o700 }),
    ).rejects.toMatchObject({ code: 'ELOCKFILE' });
    expect(await readdir(dir)).toEqual([]);
    expect(await withVolumeLock(join(dir, 'a', 'vol.lock'), async () => 'entered', { folderMode: 0o700 })).toBe(
      'entered',
    );
    expect(await readdir(join(dir, 'a'))).toEqual([]);
  });

  it('releases the lock when the function throws', async () => {
    const lock = join(dir, 'vol.lock');
    await expect(
      withVolumeLock(lock, async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await withVolumeLock(lock, async () => 'again', { signal: AbortSignal.timeout(1000) })).toBe('again');
    expect(await readdir(dir)).toEqual([]);
  });
});
