import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { execPlugin } from './exec-plugin.js';
import { closePipeEnd, takePipe } from './pipes.js';
import { PluginDir } from '../__fixtures__/plugins.js';

const BUILT_CLIENT = fileURLToPath(new URL('../../dist/client.js', import.meta.url));
const BUILT_PIPES = fileURLToPath(new URL('../../dist/client/pipes.js', import.meta.url));

/** The pipes a plugin writes to carry every byte it writes to the caller, and to nobody else. */

let dir: PluginDir;
beforeEach(async () => {
  dir = await PluginDir.create();
});
const started: ChildProcess[] = [];
afterEach(async () => {
  for (const child of started.splice(0)) child.kill('SIGKILL');
  await dir.cleanup();
});

/** Starts `command` with both ends of `pipe` open as its descriptors 200 and 201 (not close-on-exec). */
function startHolding(pipe: { read: number; write: number }, command: string, args: string[]): ChildProcess {
  const stdio: Array<'ignore' | 'pipe' | number> = Array.from({ length: 202 }, () => 'ignore');
  stdio[1] = 'pipe';
  stdio[2] = 'pipe';
  stdio[200] = pipe.read;
  stdio[201] = pipe.write;
  const child = spawn(command, args, { stdio });
  started.push(child);
  return child;
}

async function outputOf(child: ChildProcess): Promise<string> {
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((resolve) => child.once('exit', resolve));
  return out;
}

describe('plugin output through the pipes', () => {
  it('arrives whole and unmixed over 300 runs, 10 at a time', async () => {
    await dir.file(
      'p',
      '#!/bin/sh\nprintf \'{"path": "%s/%s", "bytes": 12345}\' "$DHV_VOLUMES_DIR" "$DHV_VOLUME_ID"\necho noise >&2\n',
      0o755,
    );
    const wrong: string[] = [];
    await Promise.all(
      Array.from({ length: 10 }, async (_, worker) => {
        for (let i = 0; i < 30; i++) {
          const volumeId = `${worker}-${i}`;
          const run = await execPlugin({ pluginDir: dir.path, pluginId: 'p' }, 'create', {
            volumesDir: '/v',
            volumeName: 'a',
            volumeId,
            nodeId: 'n',
          });
          if (run.path !== `/v/${volumeId}` || run.bytes !== 12345n || run.stderr !== 'noise\n')
            wrong.push(`${volumeId}: ${JSON.stringify([run.stdout, run.stderr])}`);
        }
      }),
    );
    expect(wrong).toEqual([]);
  });

  // A CI runner can leave both ends of its own output pipe open in everything it starts.
  // Taken for a plugin, that pipe would carry the plugin's output into the runner, and
  // every holder of it, the runner too, would be killed as the plugin's leftover.
  it('never hands a plugin a pipe this process inherited, nor kills who holds one', async () => {
    const inherited = await takePipe();
    await dir.bash('holder', 'setsid /bin/sleep 30 & echo \'{"version": "1.0.0"}\'');
    const bystander = startHolding(inherited, '/bin/sleep', ['60']);
    const script = [
      `const { takePipe } = await import(${JSON.stringify(BUILT_PIPES)});`,
      `const { execPlugin } = await import(${JSON.stringify(BUILT_CLIENT)});`,
      'const ids = [];',
      'for (let i = 0; i < 40; i++) ids.push((await takePipe()).id);',
      `const run = await execPlugin({ pluginDir: ${JSON.stringify(dir.path)}, pluginId: 'holder' }, 'fingerprint', {});`,
      'console.log(JSON.stringify({ ids, version: run.version }));',
    ].join('\n');
    const child = startHolding(inherited, process.execPath, ['--input-type=module', '-e', script]);
    closePipeEnd(inherited.read);
    closePipeEnd(inherited.write);
    const out = await outputOf(child);
    expect(child.signalCode, out).toBeNull();
    const report = JSON.parse(out.trim().split('\n').pop()!) as { ids: string[]; version: string };
    expect(report.version).toBe('1.0.0');
    expect(report.ids).toHaveLength(40);
    expect(report.ids).not.toContain(inherited.id);
    expect(bystander.exitCode).toBeNull();
    expect(bystander.signalCode).toBeNull();
  });
});
