import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildEnvironment } from '@dhv/sdk/client';
import { loopDevicesBackedBy, mountsAt } from '@dhv/sdk/host';
import { skipRootTests, REFERENCE_LOOPBACK } from './support/kit.js';
import { tempAgent, volumeHcl, type TempAgent } from './support/dhv-agent.js';

/**
 * The two cases that turned the old lock's race into real damage: a
 * stale lock broken while others wait made duplicate volumes and double mkfs runs.
 */

let agent: TempAgent | undefined;
const started: ChildProcess[] = [];

afterEach(async () => {
  for (const child of started.splice(0)) child.kill('SIGKILL');
  await agent?.cleanup();
  agent = undefined;
});

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

async function until(what: string, test: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('one name, one volume', () => {
  it('a slow create of "dup" killed with kill -9 while 10 others queue leaves exactly one volume named dup', async () => {
    agent = await tempAgent();
    const a = agent;
    const marker = join(a.dir, 'slow-started');
    // Sleeps before making the volume, so the kill lands while it holds the name's lock.
    await a.plugin(
      'slow',
      `#!/bin/bash
dir="$DHV_VOLUMES_DIR/$DHV_VOLUME_ID"
case "$1" in
  fingerprint) echo '{"version": "1.0.0"}' ;;
  create)
    [ -e ${JSON.stringify(marker)} ] || { : > ${JSON.stringify(marker)}; /bin/sleep 3; }
    /bin/mkdir -p "$dir" || exit 1
    echo "{\\"path\\": \\"$dir\\", \\"bytes\\": 0}" ;;
  delete) /bin/rm -rf "$dir"; echo '{}' ;;
esac
`,
    );
    const spec = await a.file('dup.hcl', volumeHcl({ name: 'dup', plugin_id: 'slow' }));
    const first = a.start('volume', 'create', spec);
    started.push(first);
    await until('the slow create to start', () => existsSync(marker));
    const others = Array.from({ length: 10 }, () => a.start('volume', 'create', spec));
    started.push(...others);
    await new Promise((r) => setTimeout(r, 500)); // the others queue behind the name's lock
    first.kill('SIGKILL');
    const codes = await Promise.all(others.map(exited));

    const volumes = (await a.json<Array<{ Name: string; ID: string }>>('volume', 'status')).filter(
      (v) => v.Name === 'dup',
    );
    expect(volumes).toHaveLength(1);
    expect(codes.filter((c) => c === 0)).toHaveLength(1);
  }, 180_000);
});

describe.skipIf(skipRootTests('one ID, one image'))('one ID, one image (root)', () => {
  it('10 concurrent dhv-loopback creates of one ID after a planted stale lock: one mkfs, one loop device, one mount', async () => {
    agent = await tempAgent();
    const volumesDir = agent.volumesDir;
    const volumeId = '6f1c8a52-3f77-4c0e-9d5b-2a0c1e7b9d41';
    await mkdir(join(volumesDir, '.dhv-loopback'), { recursive: true, mode: 0o700 });
    // The old lock's stale form: "<pid> <start>" of a process that is gone.
    const sleeper = spawn('/bin/sleep', ['60']);
    const pid = sleeper.pid!;
    sleeper.kill('SIGKILL');
    await exited(sleeper);
    await writeFile(join(volumesDir, '.dhv-loopback', `${volumeId}.lock`), `${pid} 12345`);

    const env = buildEnvironment(
      'create',
      {
        volumesDir,
        pluginDir: agent.pluginDir,
        volumeName: 'one',
        volumeId,
        nodeId: 'node',
        nodePool: 'default',
        capacityMinBytes: 16n * 2n ** 20n,
        capacityMaxBytes: 0n,
        parameters: null,
      },
      REFERENCE_LOOPBACK,
    );
    const runs = await Promise.all(
      Array.from(
        { length: 10 },
        () =>
          new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
            const child = spawn(REFERENCE_LOOPBACK, ['create'], { env });
            started.push(child);
            let stdout = '';
            let stderr = '';
            child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
            child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
            child.once('close', (code) => resolve({ code, stdout, stderr }));
          }),
      ),
    );

    expect(runs.map((r) => r.code)).toEqual(Array(10).fill(0));
    const path = join(volumesDir, volumeId);
    for (const run of runs) expect(JSON.parse(run.stdout)).toMatchObject({ path });
    // Only a create that formats a new image says "created ... volume"; the others find it mounted.
    expect(runs.filter((r) => /created \S+ volume/.test(r.stderr))).toHaveLength(1);
    expect(await loopDevicesBackedBy(join(volumesDir, '.dhv-loopback', `${volumeId}.img`))).toHaveLength(1);
    expect(await mountsAt(path)).toHaveLength(1);
  }, 180_000);
});
