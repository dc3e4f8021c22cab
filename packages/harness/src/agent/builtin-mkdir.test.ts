import { readFileSync } from 'node:fs';
import { chmod, lstat, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PluginError } from '@dhv/sdk/client';
import { builtinMkdirCreate, builtinMkdirDelete, existingVolumePaths } from './builtin-mkdir.js';
import { removeTempDir, root, skipUnless, tempDir } from '../../../../test/support/kit.js';

interface LayoutEntry {
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'remove';
  content?: string;
  mode?: string;
  target?: string;
}

type PathState =
  { exists: false } | { exists: true; type: 'dir' | 'file' | 'symlink'; mode: string; uid: number; gid: number };

interface MkdirCase {
  name: string;
  why: string;
  op: 'create' | 'delete';
  request: { volumesDir: string; volumeId: string; parameters: Record<string, string> | null };
  setup?: LayoutEntry[];
  umask: string;
  inspect: string[];
  nomad: {
    ok: boolean;
    response?: { path: string; bytes: string };
    error?: string;
    nondeterministic?: boolean;
    outcomes?: Array<{ error: string; count: number }>;
    after: Record<string, PathState>;
  };
}

const VECTORS = fileURLToPath(new URL('../../../../test/vectors/nomad-agent/builtin-mkdir.json', import.meta.url));
const CASES = (JSON.parse(readFileSync(VECTORS, 'utf8')) as { cases: MkdirCase[] }).cases;

/** The vectors were recorded as root (owners 0, chown to any ID): elsewhere they cannot hold. */
const notRoot = skipUnless('the built-in mkdir vectors (recorded as root; they chown to other users)', root());

const fill = (text: string, root: string) => text.replaceAll('{root}', root);

async function applyLayout(root: string, layout: readonly LayoutEntry[]): Promise<void> {
  for (const entry of layout) {
    const path = join(root, entry.path);
    if (entry.type === 'remove') await rm(path, { recursive: true, force: true });
    else if (entry.type === 'dir') {
      await mkdir(path, { recursive: true });
      await chmod(path, Number.parseInt(entry.mode ?? '0755', 8));
    } else if (entry.type === 'symlink') {
      await mkdir(dirname(path), { recursive: true });
      await symlink(fill(entry.target!, root), path);
    } else {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, entry.content ?? '');
      await chmod(path, Number.parseInt(entry.mode ?? '0755', 8));
    }
  }
}

async function inspect(path: string): Promise<PathState> {
  const s = await lstat(path).catch(() => undefined);
  if (!s) return { exists: false };
  const type = s.isSymbolicLink() ? 'symlink' : s.isDirectory() ? 'dir' : 'file';
  return { exists: true, type, mode: (s.mode & 0o7777).toString(8).padStart(4, '0'), uid: s.uid, gid: s.gid };
}

describe.skipIf(notRoot)(
  "the built-in mkdir does what Nomad's does, case by case (vectors/nomad-agent/builtin-mkdir.json)",
  () => {
    let root: string;
    let cwd: string;
    let umask: number;
    beforeEach(async () => {
      root = await tempDir('builtin-vector');
      for (const dir of ['plugins', 'volumes', 'outside', 'records', 'cwd']) await mkdir(join(root, dir));
      cwd = process.cwd();
      umask = process.umask();
    });
    afterEach(async () => {
      process.chdir(cwd);
      process.umask(umask);
      await removeTempDir(root);
    });

    it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
      await applyLayout(root, c.setup ?? []);
      process.chdir(join(root, 'cwd'));
      process.umask(Number.parseInt(c.umask, 8));
      const request = {
        volumesDir: fill(c.request.volumesDir, root),
        volumeId: fill(c.request.volumeId, root),
        parameters: c.request.parameters,
      };
      // What a restore takes without running the create: it must be what the create returns.
      const atOnce = c.op === 'create' ? (await existingVolumePaths(request.volumesDir))(request.volumeId) : undefined;
      let outcome: { ok: true; response?: { path: string; bytes: string } } | { ok: false; error: string };
      try {
        if (c.op === 'create') {
          const result = await builtinMkdirCreate(request);
          outcome = { ok: true, response: { path: result.path, bytes: String(result.bytes) } };
        } else {
          await builtinMkdirDelete(request);
          outcome = { ok: true };
        }
      } catch (err) {
        expect(err).toBeInstanceOf(PluginError);
        outcome = { ok: false, error: (err as Error).message };
      } finally {
        process.chdir(cwd);
        process.umask(umask);
      }

      if (c.nomad.ok) {
        expect(outcome).toEqual(
          c.nomad.response
            ? { ok: true, response: { ...c.nomad.response, path: fill(c.nomad.response.path, root) } }
            : { ok: true },
        );
      } else {
        const allowed = c.nomad.nondeterministic
          ? c.nomad.outcomes!.map((o) => fill(o.error, root))
          : [fill(c.nomad.error!, root)];
        expect(outcome.ok).toBe(false);
        expect(allowed).toContain(outcome.ok ? undefined : outcome.error);
      }
      if (atOnce !== undefined) expect(outcome).toEqual({ ok: true, response: { path: atOnce, bytes: '0' } });
      const after: Record<string, PathState> = {};
      for (const path of c.inspect) after[path] = await inspect(join(root, path));
      expect(after).toEqual(c.nomad.after);
    });
  },
);

describe('the built-in mkdir beyond the vectors', () => {
  let volumesDir: string;
  beforeEach(async () => {
    volumesDir = await tempDir('builtin');
  });
  afterEach(async () => {
    await removeTempDir(volumesDir);
  });

  it('quotes a bad value as Go does, escapes included', async () => {
    await expect(builtinMkdirCreate({ volumesDir, volumeId: 'v', parameters: { mode: '7\n"5' } })).rejects.toThrow(
      'invalid value for "mode": strconv.ParseUint: parsing "7\\n\\"5": invalid syntax',
    );
    await expect(builtinMkdirCreate({ volumesDir, volumeId: 'v', parameters: { gid: '-' } })).rejects.toThrow(
      'invalid value for "gid": strconv.Atoi: parsing "-": invalid syntax',
    );
    await expect(
      builtinMkdirCreate({ volumesDir, volumeId: 'v', parameters: { uid: '-9223372036854775809' } }),
    ).rejects.toThrow('invalid value for "uid": strconv.Atoi: parsing "-9223372036854775809": value out of range');
  });

  it('reports a NUL in the volume ID as Go does, without touching the disk', async () => {
    await expect(builtinMkdirCreate({ volumesDir, volumeId: 'a\0b', parameters: null })).rejects.toThrow(
      `stat ${volumesDir}/a\0b: invalid argument`,
    );
  });

  it("answers a restore at once where the create's first step would: whatever is there, through a link too", async () => {
    await mkdir(join(volumesDir, 'folder'));
    await writeFile(join(volumesDir, 'file'), '');
    await symlink(join(volumesDir, 'folder'), join(volumesDir, 'link'));
    await symlink(join(volumesDir, 'gone'), join(volumesDir, 'dangling'));
    const atOnce = await existingVolumePaths(`${volumesDir}/`);
    for (const id of ['folder', 'file', 'link']) {
      expect(atOnce(id)).toBe(join(volumesDir, id));
      expect((await builtinMkdirCreate({ volumesDir, volumeId: id, parameters: { mode: 'bad' } })).path).toBe(
        atOnce(id),
      );
    }
    // A dangling link fails the create's stat, and an absent entry is made: both are left to the create.
    for (const id of ['dangling', 'absent', 'a\0b']) expect(atOnce(id)).toBeUndefined();
    expect((await existingVolumePaths(join(volumesDir, 'absent')))('folder')).toBeUndefined();
    expect((await existingVolumePaths(join(volumesDir, 'folder', '..')))('file')).toBe(join(volumesDir, 'file'));
  });
});
