import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { definePlugin } from '@dhv/sdk';
import { buildEnvironment, decodeCreateOutput, type RESPONSE_FIELDS as TABLE } from '@dhv/sdk/client';
import type { HandlerResponseOf, ResponseValueOf } from '../packages/sdk/src/protocol/response.js';
import { readResponse } from '../packages/harness/src/conformance/inspect.js';
import { runPluginOnce } from '../packages/harness/src/agent/run-plugin-once.js';
import { pluginRunJson } from '../packages/harness/src/presenters/format-plugin-run.js';
import { removeTempDir, tempDir } from './support/kit.js';

/**
 * A field a plugin may return cannot be dropped silently (issue 33): every stage that
 * reads or writes a response takes its fields from the SDK's response table. Here the
 * table gets a new create field, `note`, and the field is seen in the runtime's check of
 * a handler's answer, the Go decoder, the conformance readers and the value of
 * `dhv plugin run --json` (the library calls the command makes, with a real plugin process).
 */

// Every module below loads the table from the built SDK: give them all the extended copy.
vi.mock('../packages/sdk/dist/protocol/response-fields.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../packages/sdk/dist/protocol/response-fields.js')>();
  const table = original.RESPONSE_FIELDS;
  return {
    ...original,
    RESPONSE_FIELDS: {
      ...table,
      create: {
        ...table.create,
        fields: {
          ...table.create.fields,
          note: {
            kind: 'string',
            goField: 'Note',
            required: false,
            check: (note: string) =>
              note.length <= 20 ? undefined : `must be at most 20 characters, got ${note.length}`,
          },
        },
      },
    },
  };
});

/** What the agent sends a create, built as it builds it. */
const createEnv = buildEnvironment(
  'create',
  { volumesDir: '/srv/volumes', volumeName: 'v', volumeId: '6b2f0a9e-3c1d-4e5f-8a7b-9c0d1e2f3a4b', nodeId: 'node' },
  '/opt/plugins/noted',
);

const withNote = (create: () => unknown) =>
  definePlugin({ name: 'noted', version: '1.0.0', create: create as never, delete: () => {} });

describe('a field added to the response table', () => {
  it('is in the types derived from it: what a handler returns and what a run decodes to', () => {
    type Fields = (typeof TABLE)['create']['fields'] & {
      note: { kind: 'string'; goField: 'Note'; required: false };
    };
    expectTypeOf<HandlerResponseOf<Fields>>().toEqualTypeOf<{ path: string; bytes?: bigint | number; note?: string }>();
    expectTypeOf<ResponseValueOf<Fields>>().toEqualTypeOf<{ path: string; bytes: bigint; note: string }>();
  });

  it("reaches the runtime's check: written when given, Go's zero value when not, refused when wrong", async () => {
    const given = await withNote(() => ({ path: '/v', bytes: 1, note: 'hello' })).invoke({
      argv: ['create'],
      env: createEnv,
    });
    expect(given).toMatchObject({ exitCode: 0, stdout: '{"path":"/v","bytes":1,"note":"hello"}' });

    const left = await withNote(() => ({ path: '/v' })).invoke({ argv: ['create'], env: createEnv });
    expect(left.stdout).toBe('{"path":"/v","bytes":0,"note":""}');

    const wrong = await withNote(() => ({ path: '/v', note: 5 })).invoke({ argv: ['create'], env: createEnv });
    expect(JSON.parse(wrong.stdout)).toEqual({
      error: 'create returned an invalid response: note must be a string, got number',
    });
    const long = await withNote(() => ({ path: '/v', note: 'x'.repeat(21) })).invoke({
      argv: ['create'],
      env: createEnv,
    });
    expect(JSON.parse(long.stdout).error).toMatch(/note must be at most 20 characters/);
  });

  it('reaches the Go decoder: decoded into the struct, and a wrong kind refused in Go words', () => {
    expect(decodeCreateOutput('{"path":"/v","NOTE":"hi"}')).toEqual({
      ok: true,
      value: { path: '/v', bytes: 0n, note: 'hi' },
    });
    expect(decodeCreateOutput('{"path":"/v","note":5}')).toEqual({
      ok: false,
      error: 'json: cannot unmarshal number into Go struct field HostVolumePluginCreateResponse.note of type string',
    });
  });

  it('reaches the conformance readers', () => {
    expect(readResponse('create', '{"path":"/v","note":"hi"}')).toEqual({
      path: { ok: true, value: '/v' },
      bytes: { ok: true, value: 0n },
      note: { ok: true, value: 'hi' },
    });
    expect(readResponse('create', '{"path":"/v","note":[]}').note).toEqual({
      ok: false,
      problem: '"note" is a JSON array, not a string',
    });
  });

  let dir: string | undefined;
  afterEach(async () => {
    await removeTempDir(dir);
    dir = undefined;
  });

  it("reaches `dhv plugin run --json`'s value, through the agent's runner and a real plugin process", async () => {
    dir = await tempDir('response-fields');
    const plugin = join(dir, 'noted');
    await writeFile(plugin, `#!/bin/sh\nprintf '%s' '{"path": "/srv/v", "bytes": 5, "note": "from the plugin"}'\n`, {
      mode: 0o755,
    });
    const outcome = await runPluginOnce({
      plugin,
      operation: 'create',
      pluginDir: dir,
      volumesDir: join(dir, 'volumes'),
      nodeId: 'node',
      nodePool: 'default',
    });
    if (!outcome.ok) throw outcome.error;
    expect(pluginRunJson(outcome).result).toEqual({ path: '/srv/v', bytes: 5n, note: 'from the plugin' });
  });
});
