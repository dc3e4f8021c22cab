import { describe, expect, it } from 'vitest';
import { definePlugin, EXIT_FAILURE, EXIT_USAGE, type PluginDefinition } from './define-plugin.js';
import { ENV } from '../protocol/variables.js';
import {
  SAMPLE_COMMON_ENV,
  SAMPLE_NODE_ID,
  SAMPLE_VOLUME_ID,
  sampleCreateEnv,
} from '../protocol/__fixtures__/agent-environment.js';
import { PluginFailure } from '../helpers/errors.js';

const VOLUME_ID = SAMPLE_VOLUME_ID;
const common = SAMPLE_COMMON_ENV;
const createEnv = sampleCreateEnv();
const deleteEnv = { ...common, [ENV.operation]: 'delete', [ENV.createdPath]: `/srv/volumes/${VOLUME_ID}` };

function plugin(over: Partial<PluginDefinition> = {}) {
  return definePlugin({
    name: 'test',
    version: '1.2.0',
    create: (request) => ({ path: `${request.volumesDir}/${request.volumeId}`, bytes: 0 }),
    delete: () => {},
    ...over,
  });
}

const create = (p = plugin()) => p.invoke({ argv: ['create'], env: createEnv });

/** stdout holds exactly one JSON document, and never a stack trace. */
function onlyDocument(stdout: string): unknown {
  expect(stdout).not.toMatch(/\n\s+at /);
  return JSON.parse(stdout);
}

describe('definePlugin', () => {
  it('refuses a version that is not a go-version', () => {
    expect(() => plugin({ version: 'one' })).toThrow(/"one" is not a valid go-version/);
  });

  it('exposes its name and version', () => {
    expect(plugin()).toMatchObject({ name: 'test', version: '1.2.0' });
  });
});

describe('fingerprint', () => {
  it('reports the plugin version with only DHV_OPERATION set', async () => {
    expect(await plugin().invoke({ argv: ['fingerprint'], env: { [ENV.operation]: 'fingerprint' } })).toEqual({
      exitCode: 0,
      stdout: '{"version":"1.2.0"}',
      stderr: '',
    });
  });

  it('uses a custom fingerprint handler, and refuses the version it returns if go-version would', async () => {
    const good = plugin({ fingerprint: () => ({ version: 'v2' }) });
    expect((await good.invoke({ argv: ['fingerprint'], env: { [ENV.operation]: 'fingerprint' } })).stdout).toBe(
      '{"version":"v2"}',
    );
    const bad = plugin({ fingerprint: () => ({ version: 'one' }) });
    const result = await bad.invoke({ argv: ['fingerprint'], env: { [ENV.operation]: 'fingerprint' } });
    expect(result.exitCode).toBe(EXIT_FAILURE);
    expect(onlyDocument(result.stdout)).toEqual({
      error: 'fingerprint returned an invalid response: version "one" is not a valid go-version (like "1.0.0")',
    });
  });
});

describe('create and delete', () => {
  it('hands create a typed request and writes its response', async () => {
    let seen: unknown;
    const p = plugin({
      create: (request) => {
        seen = request;
        return { path: '/srv/volumes/x', bytes: 5 };
      },
    });
    const result = await p.invoke({
      argv: ['create'],
      env: { ...createEnv, [ENV.capacityMinBytes]: '9223372036854775807', [ENV.capacityMaxBytes]: '0' },
    });
    expect(result).toEqual({ exitCode: 0, stdout: '{"path":"/srv/volumes/x","bytes":5}', stderr: '' });
    expect(seen).toMatchObject({ volumeId: VOLUME_ID, capacityMinBytes: 9223372036854775807n, parameters: null });
  });

  it('writes bytes beyond 2^53 exactly', async () => {
    const p = plugin({ create: () => ({ path: '/v', bytes: 2n ** 62n + 1n }) });
    expect((await create(p)).stdout).toBe('{"path":"/v","bytes":4611686018427387905}');
  });

  it('writes bytes as 0 when create gives none', async () => {
    const p = plugin({ create: () => ({ path: '/v' }) });
    expect((await create(p)).stdout).toBe('{"path":"/v","bytes":0}');
  });

  it.each([
    [{ path: 'relative' }, /path must be absolute/],
    [{ path: '/v', bytes: 1.5 }, /whole number/],
    [{ path: '/v', bytes: '5' }, /number or a bigint, got string/],
    [{ path: '/v', bytes: -1 }, /between 0 and 2\^63-1/],
    [{ path: '/v', bytes: 2n ** 63n }, /between 0 and 2\^63-1/],
    [undefined, /invalid response/],
  ])('refuses an invalid create response %o', async (response, message) => {
    const result = await create(plugin({ create: () => response as never }));
    expect(result.exitCode).toBe(EXIT_FAILURE);
    expect((onlyDocument(result.stdout) as { error: string }).error).toMatch(message);
  });

  it('runs delete with its request and writes an empty object', async () => {
    let seen: unknown;
    const p = plugin({ delete: (request) => void (seen = request) });
    expect(await p.invoke({ argv: ['delete'], env: deleteEnv })).toEqual({ exitCode: 0, stdout: '{}', stderr: '' });
    expect(seen).toMatchObject({ createdPath: `/srv/volumes/${VOLUME_ID}`, cleanup: false });
  });
});

describe("the agent's cleanup delete", () => {
  // Exactly what Nomad sends after an initial create whose saving to client state failed.
  const cleanupEnv = { ...deleteEnv, [ENV.createdPath]: '/srv/volumes', [ENV.namespace]: '', [ENV.volumeName]: '' };

  it('is accepted with an empty name and namespace, and the handler is told it is the cleanup call, with no created path', async () => {
    let seen: unknown;
    const p = plugin({ delete: (request) => void (seen = request) });
    const result = await p.invoke({ argv: ['delete'], env: cleanupEnv });
    expect(result).toMatchObject({ exitCode: 0, stdout: '{}' });
    expect(seen).toEqual({
      volumesDir: '/srv/volumes',
      pluginDir: '/opt/plugins',
      namespace: '',
      volumeName: '',
      volumeId: VOLUME_ID,
      nodeId: SAMPLE_NODE_ID,
      nodePool: 'default',
      parameters: null,
      createdPath: '',
      cleanup: true,
    });
    expect(result.stderr).toMatch(/cleanup delete/);
  });

  it.each(['/srv/volumes/', '/srv//volumes'])('recognises the volumes dir written as %s', async (createdPath) => {
    let seen: { cleanup?: boolean; createdPath?: string } = {};
    const p = plugin({ delete: (request) => void (seen = request) });
    await p.invoke({ argv: ['delete'], env: { ...cleanupEnv, [ENV.createdPath]: createdPath } });
    expect(seen).toMatchObject({ cleanup: true, createdPath: '' });
  });

  it('is not claimed for an ordinary delete with an empty name (the volume path, or no path)', async () => {
    const seen: Array<{ cleanup: boolean; createdPath: string }> = [];
    const p = plugin({ delete: (request) => void seen.push(request) });
    await p.invoke({ argv: ['delete'], env: { ...deleteEnv, [ENV.volumeName]: '' } });
    await p.invoke({ argv: ['delete'], env: { ...deleteEnv, [ENV.createdPath]: '' } });
    expect(seen).toEqual([
      expect.objectContaining({ cleanup: false, createdPath: `/srv/volumes/${VOLUME_ID}` }),
      expect.objectContaining({ cleanup: false, createdPath: '' }),
    ]);
  });

  it('still refuses an empty name on create', async () => {
    const result = await plugin().invoke({ argv: ['create'], env: { ...createEnv, [ENV.volumeName]: '' } });
    expect(result.exitCode).toBe(EXIT_USAGE);
    expect(result.stdout).toMatch(/DHV_VOLUME_NAME is empty/);
  });
});

describe('output', () => {
  it('sends console.* and process.stdout.write from handlers to stderr, leaving one JSON document on stdout', async () => {
    const p = plugin({
      create: async () => {
        console.log('log line', { a: 1 });
        console.info('info');
        console.error('error line');
        process.stdout.write('raw stdout\n');
        process.stderr.write('raw stderr\n');
        await new Promise((r) => setTimeout(r, 5));
        console.warn('after await');
        return { path: '/v', bytes: 1 };
      },
    });
    const result = await create(p);
    expect(result.stdout).toBe('{"path":"/v","bytes":1}');
    expect(result.stderr).toBe('log line { a: 1 }\ninfo\nerror line\nraw stdout\nraw stderr\nafter await\n');
  });

  it('redirects a reference to process.stdout taken before the handler ran', async () => {
    const saved = process.stdout;
    const result = await create(plugin({ create: () => (saved.write('through a saved reference\n'), { path: '/v' }) }));
    expect(result).toMatchObject({ stdout: '{"path":"/v","bytes":0}', stderr: 'through a saved reference\n' });
  });

  it('gives handlers a log function that writes a line to stderr', async () => {
    const result = await create(plugin({ create: (_r, ctx) => (ctx.log('creating'), { path: '/v' }) }));
    expect(result.stderr).toBe('creating\n');
  });

  it('keeps concurrent invocations apart', async () => {
    const p = plugin({
      create: async (request) => {
        console.log(`start ${request.volumeName}`);
        await new Promise((r) => setTimeout(r, request.volumeName === 'a' ? 20 : 1));
        console.log(`end ${request.volumeName}`);
        return { path: '/v' };
      },
    });
    const [a, b] = await Promise.all([
      p.invoke({ argv: ['create'], env: { ...createEnv, [ENV.volumeName]: 'a' } }),
      p.invoke({ argv: ['create'], env: { ...createEnv, [ENV.volumeName]: 'b' } }),
    ]);
    expect(a.stderr).toBe('start a\nend a\n');
    expect(b.stderr).toBe('start b\nend b\n');
  });

  it('puts console and process.stdout back afterwards', async () => {
    const log = console.log;
    const write = process.stdout.write;
    await create(plugin({ create: () => (console.log('x'), { path: '/v' }) }));
    expect(console.log).toBe(log);
    expect(process.stdout.write).toBe(write);
  });
});

describe('failures', () => {
  it('turns a thrown error into {"error"} and exit 1, with the stack only on stderr', async () => {
    const result = await create(
      plugin({
        create: () => {
          throw new Error('disk on fire');
        },
      }),
    );
    expect(result.exitCode).toBe(EXIT_FAILURE);
    expect(onlyDocument(result.stdout)).toEqual({ error: 'disk on fire' });
    expect(result.stderr).toMatch(/^test create: disk on fire\nError: disk on fire\n\s+at /);
  });

  it('turns a rejected promise into {"error"} and exit 1', async () => {
    const result = await create(plugin({ create: () => Promise.reject(new Error('later')) }));
    expect(result).toMatchObject({ exitCode: EXIT_FAILURE, stdout: '{"error":"later"}' });
  });

  it('turns a thrown non-Error into its text', async () => {
    const result = await create(
      plugin({
        create: () => {
          throw 'plain string';
        },
      }),
    );
    expect(result).toMatchObject({ exitCode: EXIT_FAILURE, stdout: '{"error":"plain string"}' });
  });

  it('logs no stack for an expected failure (an error with a code)', async () => {
    const result = await create(
      plugin({
        create: () => {
          throw new PluginFailure('EBADPARAM', 'unknown parameter "x"');
        },
      }),
    );
    expect(result).toEqual({
      exitCode: EXIT_FAILURE,
      stdout: '{"error":"unknown parameter \\"x\\""}',
      stderr: 'test create: unknown parameter "x"\n',
    });
  });

  it('reports every problem of an invalid request at once, with exit 2, before running the handler', async () => {
    let ran = false;
    const p = plugin({ create: () => ((ran = true), { path: '/v' }) });
    const result = await p.invoke({ argv: ['create'], env: { [ENV.operation]: 'create', [ENV.volumeId]: 'nope' } });
    expect(ran).toBe(false);
    expect(result.exitCode).toBe(EXIT_USAGE);
    const { error } = onlyDocument(result.stdout) as { error: string };
    expect(error).toMatch(/^invalid create request: /);
    expect(error).toContain(`${ENV.volumesDir} is missing`);
    expect(error).toContain(`${ENV.volumeId} must be a UUID`);
    expect(error).toContain(`${ENV.parameters} is missing`);
  });

  it.each([
    [
      ['resize'],
      { [ENV.operation]: 'resize' },
      'unknown operation "resize"; expected one of: fingerprint, create, delete',
    ],
    [[], { [ENV.operation]: 'create' }, 'no operation given; expected one of: fingerprint, create, delete'],
    [
      ['create'],
      { ...createEnv, [ENV.operation]: 'delete' },
      `${ENV.operation} is "delete" but the operation argument is "create"; they must agree`,
    ],
    [['fingerprint'], {}, `${ENV.operation} is missing`],
  ])('refuses argv %j with %j', async (argv, env, message) => {
    const result = await plugin().invoke({ argv, env });
    expect(result.exitCode).toBe(EXIT_USAGE);
    expect((onlyDocument(result.stdout) as { error: string }).error).toContain(message);
  });
});

describe('the abort signal', () => {
  const waitForAbort = plugin({
    create: (_request, ctx) =>
      new Promise((_resolve, reject) => {
        const stop = () => {
          ctx.log('cleaning up');
          reject(new PluginFailure('EABORTED', `stopped: ${(ctx.signal.reason as Error).message}`));
        };
        if (ctx.signal.aborted) stop();
        else ctx.signal.addEventListener('abort', stop);
      }),
  });

  it("fires before the agent's deadline, so the handler can clean up and fail cleanly", async () => {
    const result = await waitForAbort.invoke({ argv: ['create'], env: createEnv, abortAfterMs: 20 });
    expect(result.exitCode).toBe(EXIT_FAILURE);
    expect(onlyDocument(result.stdout)).toEqual({ error: "stopped: the agent's 60s deadline is near" });
    expect(result.stderr).toContain('cleaning up\n');
  });

  it('fires when the caller aborts', async () => {
    const controller = new AbortController();
    const pending = waitForAbort.invoke({ argv: ['create'], env: createEnv, signal: controller.signal });
    controller.abort(new Error('agent shutting down'));
    expect(await pending).toMatchObject({ exitCode: EXIT_FAILURE, stdout: '{"error":"stopped: agent shutting down"}' });
  });

  it('is already aborted when the caller aborted before the run', async () => {
    const signal = AbortSignal.abort(new Error('too late'));
    const p = plugin({ create: (_r, ctx) => ({ path: ctx.signal.aborted ? '/aborted' : '/running' }) });
    expect((await p.invoke({ argv: ['create'], env: createEnv, signal })).stdout).toBe('{"path":"/aborted","bytes":0}');
  });

  it('counts the deadline from when the agent started the plugin, not from when the handler starts', async () => {
    // Started 59.99 s ago: the 55 s point is long past, so the signal fires at once.
    const result = await waitForAbort.invoke({
      argv: ['create'],
      env: createEnv,
      startedAt: performance.now() - 59_990,
    });
    expect(result).toMatchObject({
      exitCode: EXIT_FAILURE,
      stdout: '{"error":"stopped: the agent\'s 60s deadline is near"}',
    });
  });

  it('leaves 55 s of the 60 s create budget by default', async () => {
    // Nothing waits 55 s here: the handler reads the signal's state right away.
    const p = plugin({ create: (_r, ctx) => ({ path: ctx.signal.aborted ? '/aborted' : '/running' }) });
    expect((await create(p)).stdout).toBe('{"path":"/running","bytes":0}');
  });
});
