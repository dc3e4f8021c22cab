import { describe, expect, it } from 'vitest';
import { InvalidRequestError, readRequest } from './request.js';
import { ENV, REQUEST_FIELDS } from './variables.js';
import { SAMPLE_NODE_ID, SAMPLE_VOLUME_ID, sampleCreateEnv } from './__fixtures__/agent-environment.js';

const VOLUME_ID = SAMPLE_VOLUME_ID;
const createEnv = sampleCreateEnv;

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof InvalidRequestError) return err.problems;
    throw err;
  }
  throw new Error('expected an InvalidRequestError');
}

describe('readRequest', () => {
  it('reads a create request into camelCase fields', () => {
    expect(readRequest('create', createEnv())).toEqual({
      volumesDir: '/srv/volumes',
      pluginDir: '/opt/plugins',
      namespace: 'default',
      volumeName: 'data',
      volumeId: VOLUME_ID,
      nodeId: SAMPLE_NODE_ID,
      nodePool: 'default',
      capacityMinBytes: 0n,
      capacityMaxBytes: 0n,
      parameters: null,
    });
  });

  it('reads a delete request, with DHV_CREATED_PATH and without capacities', () => {
    const {
      [ENV.capacityMinBytes]: _min,
      [ENV.capacityMaxBytes]: _max,
      ...env
    } = createEnv({ [ENV.operation]: 'delete' });
    const request = readRequest('delete', { ...env, [ENV.createdPath]: `/srv/volumes/${VOLUME_ID}` });
    expect(request.createdPath).toBe(`/srv/volumes/${VOLUME_ID}`);
    expect(Object.keys(request).sort()).toEqual([...REQUEST_FIELDS.delete].sort());
  });

  it('accepts an empty DHV_CREATED_PATH (the agent sends one when create gave no path)', () => {
    expect(readRequest('delete', { ...createEnv(), [ENV.createdPath]: '' }).createdPath).toBe('');
  });

  it('reads fingerprint with no variables at all', () => {
    expect(readRequest('fingerprint', {})).toEqual({});
  });

  it('reports every missing variable in one error', () => {
    const problems = problemsOf(() => readRequest('create', {}));
    expect(problems).toEqual(REQUEST_FIELDS.create.map((field) => `${ENV[field]} is missing`));
  });

  it('reports every invalid variable in one error, with what was wrong', () => {
    const err = (() => {
      try {
        readRequest(
          'create',
          createEnv({
            [ENV.volumesDir]: 'relative/dir',
            [ENV.volumeId]: '../../etc',
            [ENV.capacityMinBytes]: '-1',
            [ENV.capacityMaxBytes]: '1e3',
            [ENV.parameters]: '[]',
            [ENV.namespace]: '',
          }),
        );
      } catch (e) {
        return e as InvalidRequestError;
      }
      throw new Error('expected an error');
    })();
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err.code).toBe('EINVALIDREQUEST');
    expect(err.operation).toBe('create');
    expect(err.problems).toHaveLength(6);
    expect(err.message).toMatch(/^invalid create request: /);
    for (const name of [
      ENV.volumesDir,
      ENV.volumeId,
      ENV.capacityMinBytes,
      ENV.capacityMaxBytes,
      ENV.parameters,
      ENV.namespace,
    ]) {
      expect(err.message).toContain(name);
    }
  });

  describe('capacities', () => {
    it('are bigints, exact beyond 2^53', () => {
      const request = readRequest(
        'create',
        createEnv({ [ENV.capacityMinBytes]: '9007199254740993', [ENV.capacityMaxBytes]: '9223372036854775807' }),
      );
      expect(request.capacityMinBytes).toBe(9007199254740993n);
      expect(request.capacityMaxBytes).toBe(9223372036854775807n);
    });

    it('are refused beyond int64', () => {
      expect(
        problemsOf(() => readRequest('create', createEnv({ [ENV.capacityMaxBytes]: '9223372036854775808' }))),
      ).toEqual([
        `${ENV.capacityMaxBytes} is larger than the largest int64 (9223372036854775807), got 9223372036854775808`,
      ]);
    });

    it.each(['-1', '1.5', ' 1', '0x10', '1e3', ''])('refuse %j', (value) => {
      expect(problemsOf(() => readRequest('create', createEnv({ [ENV.capacityMinBytes]: value })))).toHaveLength(1);
    });

    it('refuse a maximum below the minimum, but take 0 as "no maximum"', () => {
      expect(
        problemsOf(() =>
          readRequest('create', createEnv({ [ENV.capacityMinBytes]: '10', [ENV.capacityMaxBytes]: '5' })),
        ),
      ).toEqual([`${ENV.capacityMaxBytes} (5) is smaller than ${ENV.capacityMinBytes} (10)`]);
      expect(
        readRequest('create', createEnv({ [ENV.capacityMinBytes]: '10', [ENV.capacityMaxBytes]: '0' }))
          .capacityMaxBytes,
      ).toBe(0n);
    });
  });

  describe('DHV_PARAMETERS', () => {
    it('null is no parameters', () => {
      expect(readRequest('create', createEnv({ [ENV.parameters]: 'null' })).parameters).toBeNull();
    });

    it('is an object of strings', () => {
      expect(
        readRequest('create', createEnv({ [ENV.parameters]: '{"mode":"0755","html":"\\u003cb\\u003e"}' })).parameters,
      ).toEqual({
        mode: '0755',
        html: '<b>',
      });
    });

    it.each(['[]', '"x"', '1', 'true', '{"mode":755}', '{"a":null}', '{"a":{"b":"c"}}', 'not json', ''])(
      'refuses %j',
      (value) => {
        expect(problemsOf(() => readRequest('create', createEnv({ [ENV.parameters]: value })))).toHaveLength(1);
      },
    );

    it('names every value that is not a string', () => {
      expect(
        problemsOf(() => readRequest('create', createEnv({ [ENV.parameters]: '{"a":1,"b":"ok","c":false}' }))),
      ).toEqual([`${ENV.parameters} values must be strings; not: "a", "c"`]);
    });
  });

  it.each(['not-a-uuid', '5b8a2a5e8f0a4c8e9a4f0c7d3f2b1a99', `${VOLUME_ID}/..`, ''])('refuses volume ID %j', (id) => {
    expect(problemsOf(() => readRequest('create', createEnv({ [ENV.volumeId]: id })))).toHaveLength(1);
  });
});

describe('an empty variable', () => {
  it('is one problem, not also a malformed value', () => {
    expect(problemsOf(() => readRequest('create', createEnv({ [ENV.volumesDir]: '', [ENV.volumeId]: '' })))).toEqual([
      `${ENV.volumesDir} is empty`,
      `${ENV.volumeId} is empty`,
    ]);
  });
});
