import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { arch } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTempDir, runDhv, tempDir } from './support/kit.js';

/**
 * Issue 35: a plugin that is there but cannot run gets the real cause and its one-line fix,
 * the same words from `dhv plugin run`, `dhv agent fingerprint` and `dhv check` (one home:
 * the SDK's spawn diagnosis). execve says "no such file or directory" for three of these.
 */

let dir: string;
let pluginDir: string;

/** The offset and length of the PT_INTERP path (the ELF loader) in a little-endian ELF64 program, if it has one. */
function interpreterOf(elf: Buffer): { offset: number; length: number } | undefined {
  if (elf[4] !== 2 || elf[5] !== 1) return undefined;
  const phoff = Number(elf.readBigUInt64LE(32));
  const size = elf.readUInt16LE(54);
  for (let i = 0; i < elf.readUInt16LE(56); i++) {
    const at = phoff + i * size;
    if (elf.readUInt32LE(at) === 3)
      return { offset: Number(elf.readBigUInt64LE(at + 8)), length: Number(elf.readBigUInt64LE(at + 32)) - 1 };
  }
  return undefined;
}

const cases: Array<{ name: string; make: (path: string) => Promise<void>; says: RegExp }> = [
  {
    name: 'crlf',
    make: (path) => writeFile(path, '#!/bin/sh\r\necho \'{"version":"1.0.0"}\'\r\n', { mode: 0o755 }),
    says: /it has Windows \(CRLF\) line endings: .*"\/bin\/sh\\r".*; convert it to Unix line endings: sed -i 's\/\\r\$\/\/' \S+crlf/,
  },
  {
    name: 'no-interpreter',
    make: (path) => writeFile(path, '#!/usr/local/bin/no-such-shell\necho {}\n', { mode: 0o755 }),
    says: /its #! line names \/usr\/local\/bin\/no-such-shell, which does not exist on this host .*; install \/usr\/local\/bin\/no-such-shell, or change the #! line/,
  },
  {
    name: 'other-arch',
    make: async (path) => {
      const elf = await readFile('/bin/true');
      elf.writeUInt16LE(arch() === 'x64' ? 183 : 62, 18);
      await writeFile(path, elf, { mode: 0o755 });
    },
    says: /it is built for .*, and this host is .*; build it for linux\/\w+/,
  },
  {
    name: 'no-loader',
    make: async (path) => {
      const elf = await readFile('/bin/true');
      const interp = interpreterOf(elf);
      if (!interp) throw new Error('/bin/true is not a dynamically linked little-endian ELF64 program');
      elf.write('X', interp.offset + interp.length - 1, 'latin1');
      await writeFile(path, elf, { mode: 0o755 });
    },
    says: /it is dynamically linked, and its loader \S+X \(the ELF interpreter\) does not exist on this host.*; build it statically/,
  },
];

beforeAll(async () => {
  dir = await tempDir('spawn-diagnosis');
  pluginDir = join(dir, 'plugins');
  await mkdir(pluginDir);
  for (const c of cases) await c.make(join(pluginDir, c.name));
  await chmod(dir, 0o755);
});

afterAll(async () => {
  await removeTempDir(dir);
});

describe.concurrent('issue 35: a plugin that cannot run is told the real cause, the same everywhere', () => {
  for (const c of cases) {
    it(`${c.name}: dhv plugin run, dhv agent fingerprint and dhv check name it with the fix`, async () => {
      const plugin = join(pluginDir, c.name);
      const run = await runDhv(['plugin', 'run', plugin, 'fingerprint']);
      expect(run.exitCode).toBe(1);
      expect(run.stderr).toMatch(c.says);
      expect(run.stderr).not.toContain('Put the plugin in the plugin directory');
      const json = await runDhv(['plugin', 'run', plugin, 'fingerprint', '--json']);
      expect((JSON.parse(json.stderr) as { error: { spawnProblem: string } }).error.spawnProblem).toMatch(c.says);

      const fingerprint = await runDhv([
        'agent',
        'fingerprint',
        '--data-dir',
        join(dir, `data-${c.name}`),
        '--plugin-dir',
        pluginDir,
      ]);
      expect(fingerprint.stdout + fingerprint.stderr).toMatch(c.says);

      const check = await runDhv(['check', plugin]);
      expect(check.exitCode).not.toBe(0);
      expect(check.stdout + check.stderr).toMatch(c.says);
    });
  }
});
