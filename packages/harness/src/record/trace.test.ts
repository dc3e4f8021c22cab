import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pathMapFor } from './path-map.js';
import { readTrace, recordedBytes, type RecordedCall } from './recorded-call.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await removeTempDir(dir);
  dir = undefined;
});

async function traceFile(text: string): Promise<string> {
  dir = await tempDir('trace-test');
  const file = join(dir, 'calls.jsonl');
  await writeFile(file, text);
  return file;
}

const call = (plugin: string, env: Record<string, string> = {}): RecordedCall => ({
  plugin,
  argv: ['fingerprint'],
  env: { DHV_OPERATION: 'fingerprint', ...env },
  exit: 0,
  stdout: '{"version":"1.0.0"}\n',
  stderr: '',
});

describe('a trace', () => {
  it('skips a line cut short (a recorder killed mid-write, a full disk) and says where', async () => {
    const whole = JSON.stringify(call('p'));
    const file = await traceFile(`${whole}\n${whole.slice(0, 20)}${whole}\n${whole.slice(0, 30)}`);
    const { calls, skipped } = await readTrace(file);
    expect(calls.map((c) => c.where)).toEqual(['line 1']);
    expect(skipped).toEqual(['line 2: not JSON (a line cut short?)', 'line 3: not JSON (a line cut short?)']);
  });

  it('refuses a JSON line that is not a plugin call, naming the line and the field', async () => {
    const file = await traceFile(`${JSON.stringify(call('p'))}\n{"plugin": "p", "argv": "create"}\n`);
    await expect(readTrace(file)).rejects.toMatchObject({
      code: 'TRACE_INVALID',
      message: expect.stringContaining('line 2'),
    });
  });

  it("reads a real-agent scenario's plugin_calls in step order", async () => {
    const file = await traceFile(
      JSON.stringify({
        steps: [{ run: 'x' }, { plugin_calls: [call('a'), call('b')] }, { plugin_calls: [call('c')] }],
      }),
    );
    const { calls } = await readTrace(file);
    expect(calls.map((c) => [c.call.plugin, c.where])).toEqual([
      ['a', 'step 2, call 1'],
      ['b', 'step 2, call 2'],
      ['c', 'step 3, call 1'],
    ]);
  });

  // The recorder writes output that is not UTF-8 as base64 (record-replay.test.ts runs it).
  it('reads output kept as base64 back byte for byte', () => {
    const bytes = Buffer.from([0x72, 0xff, 0xfe, 0x0a]);
    expect(recordedBytes({ ...call('p'), stderr_base64: bytes.toString('base64') }, 'stderr')).toEqual(bytes);
  });
});

describe("a replay's path map", () => {
  it('maps the recorded dirs to the sandbox and back, the longest text first', () => {
    const { map, folders } = pathMapFor(
      [call('p', { DHV_VOLUMES_DIR: '/opt/nomad/volumes', DHV_PLUGIN_DIR: '/opt/nomad/volumes-plugins' })],
      '/tmp/sb',
    );
    expect(folders).toEqual(['/tmp/sb/volumes', '/tmp/sb/plugins']);
    expect(map.forward('/opt/nomad/volumes-plugins/x and /opt/nomad/volumes/v')).toBe(
      '/tmp/sb/plugins/x and /tmp/sb/volumes/v',
    );
    expect(map.backward('{"path":"/tmp/sb/volumes/v"}')).toBe('{"path":"/opt/nomad/volumes/v"}');
  });

  it('moves a created path outside the recorded dirs (a registered host_path) into the sandbox', () => {
    const { map, folders } = pathMapFor(
      [
        call('p', { DHV_VOLUMES_DIR: '/opt/v', DHV_CREATED_PATH: '/srv/registered-p' }),
        call('p', { DHV_VOLUMES_DIR: '/opt/v', DHV_CREATED_PATH: '/opt/v/inside' }),
      ],
      '/tmp/sb',
    );
    expect(folders).toEqual(['/tmp/sb/volumes', '/tmp/sb/outside-1']);
    expect(map.forward('/srv/registered-p')).toBe('/tmp/sb/outside-1/registered-p');
    expect(map.forward('/opt/v/inside')).toBe('/tmp/sb/volumes/inside');
    expect(map.backward('/tmp/sb/outside-1/registered-p')).toBe('/srv/registered-p');
  });

  it("gives the vectors' placeholders a folder and fixed UUIDs, and maps them back", () => {
    const { map } = pathMapFor(
      [call('p', { DHV_VOLUMES_DIR: '<ROOT>/volumes', DHV_VOLUME_ID: '<VOL1>', DHV_NODE_ID: '<NODE>' })],
      '/tmp/sb',
    );
    const id = map.forward('<VOL1>');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(map.forward('<ROOT>/volumes/<VOL1> <ROOT>/data')).toBe(`/tmp/sb/volumes/${id} /tmp/sb/data`);
    expect(map.backward(`created /tmp/sb/volumes/${id} (${id.slice(0, 8)})`)).toBe(
      'created <ROOT>/volumes/<VOL1> (<VOL1:short>)',
    );
  });
});
