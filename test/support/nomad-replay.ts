import { readFileSync, writeFileSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeTempDir, tempDir } from './kit.js';

/**
 * Replaying ../vectors/nomad-agent/ (see its README): a fresh {root} per case, its layout
 * written exactly as the README says, and the calls the recorder saw read back.
 */

export interface Call {
  argv: string[];
  env: string[];
  stdin: string;
  stdout: string;
  stderr: string;
  cwd: string;
  umask: string;
}

export interface LayoutEntry {
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'remove';
  mode?: string;
  body?: string;
  content?: string;
  target?: string;
}

export interface VectorFile<C> {
  recorder: string;
  cases: C[];
}

export function loadNomadVectors<C>(name: string): VectorFile<C> {
  const file = fileURLToPath(new URL(`../vectors/nomad-agent/${name}.json`, import.meta.url));
  return JSON.parse(readFileSync(file, 'utf8')) as VectorFile<C>;
}

/** Every `{root}` in any string of `value` replaced by `root`. */
export function substitute<T>(value: T, root: string): T {
  if (typeof value === 'string') return value.replaceAll('{root}', root) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => substitute(v, root)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, root)])) as T;
  }
  return value;
}

export interface Root {
  path: string;
  pluginDir: string;
  cwd: string;
  cleanup(): Promise<void>;
}

export async function makeRoot(): Promise<Root> {
  const path = await tempDir('nomad');
  for (const d of ['plugins', 'volumes', 'outside', 'records', 'cwd']) await mkdir(join(path, d), { mode: 0o755 });
  return {
    path,
    pluginDir: join(path, 'plugins'),
    cwd: join(path, 'cwd'),
    cleanup: () => removeTempDir(path),
  };
}

/** A plugin file as the README builds it: "#!/bin/sh\n" + RECORDER + body + "\n". */
export function pluginScript(recorder: string, body: string): string {
  return `#!/bin/sh\n${recorder}${body}\n`;
}

export async function applyLayout(root: string, recorder: string, layout: readonly LayoutEntry[]): Promise<void> {
  for (const entry of layout) {
    const path = join(root, entry.path);
    switch (entry.type) {
      case 'file': {
        await mkdir(dirname(path), { recursive: true, mode: 0o755 });
        await rm(path, { force: true, recursive: true });
        const text = entry.body !== undefined ? pluginScript(recorder, entry.body) : (entry.content ?? '');
        // Written in one synchronous call: the cases run concurrently, and a child another
        // case forks while this file is open for writing holds it open too, until it execs,
        // so this case's exec of it would fail with ETXTBSY ("text file busy").
        writeFileSync(path, text, 'utf8');
        await chmod(path, parseInt(entry.mode ?? '0755', 8));
        break;
      }
      case 'dir':
        await mkdir(path, { recursive: true, mode: 0o755 });
        await chmod(path, parseInt(entry.mode ?? '0755', 8));
        break;
      case 'symlink':
        await mkdir(dirname(path), { recursive: true, mode: 0o755 });
        await symlink(entry.target!, path);
        break;
      case 'remove':
        await rm(path, { recursive: true, force: true });
        break;
    }
  }
}

/** The calls the recorder saw, in the order they started. */
export async function recordedCalls(root: string): Promise<Call[]> {
  const dir = join(root, 'records');
  const names = await readdir(dir);
  const prefixes = [...new Set(names.map((n) => n.replace(/\.(env|argv|io)$/, '')))];
  prefixes.sort((a, b) => {
    const [na, pa] = a.split('.').map(BigInt) as [bigint, bigint];
    const [nb, pb] = b.split('.').map(BigInt) as [bigint, bigint];
    return na === nb ? Number(pa - pb) : na < nb ? -1 : 1;
  });
  const calls: Call[] = [];
  for (const prefix of prefixes) {
    const read = (ext: string) => readFile(join(dir, `${prefix}.${ext}`), 'utf8').catch(() => '');
    const env = (await read('env')).split('\0').filter((e) => e !== '');
    const argv = (await read('argv')).replace(/\n$/, '').split('\n');
    const io = (await read('io')).split('\n');
    const kind = (target: string | undefined) => (target ?? '').replace(/^(pipe|socket):\[[0-9]+\]$/, '$1');
    calls.push({
      argv,
      env,
      stdin: kind(io[0]),
      stdout: kind(io[1]),
      stderr: kind(io[2]),
      cwd: io[3] ?? '',
      umask: io[4] ?? '',
    });
  }
  return calls;
}
