import { describe, expect, test } from 'vitest';
import { looksLikeStackTrace, readCreatedBytes, readCreatedPath } from './inspect.js';

describe('reading a create response field by field, as the agent decodes it', () => {
  test('path: keys match case-insensitively and the last one wins, as in encoding/json', () => {
    expect(readCreatedPath('{"PATH": "/a", "path": "/b"}')).toEqual({ ok: true, value: '/b' });
    expect(readCreatedPath('{"Path": "/v"}\n')).toEqual({ ok: true, value: '/v' });
  });

  test('path: missing, empty, not a string, or stdout that is not one JSON object is a problem that says which', () => {
    expect(readCreatedPath('{"bytes": 0}')).toEqual({ ok: false, problem: 'the response has no "path"' });
    expect(readCreatedPath('{"path": ""}')).toEqual({ ok: false, problem: '"path" is empty' });
    expect(readCreatedPath('{"path": 7}')).toEqual({ ok: false, problem: '"path" is a JSON number, not a string' });
    expect(readCreatedPath('creating\n{"path": "/v"}')).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^stdout is not one JSON document/),
    });
    expect(readCreatedPath('[]')).toEqual({ ok: false, problem: 'stdout is a JSON array, not an object' });
  });

  test('bytes: missing means 0; a string, a float or a number beyond int64 is refused, whatever path says', () => {
    expect(readCreatedBytes('{"path": "/v"}')).toEqual({ ok: true, value: 0n });
    expect(readCreatedBytes('{"bytes": 9007199254740993}')).toEqual({ ok: true, value: 9007199254740993n });
    expect(readCreatedBytes('{"bytes": "0"}')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('the string "0"'),
    });
    expect(readCreatedBytes('{"bytes": 1.5}')).toMatchObject({ ok: false, problem: expect.stringContaining('1.5') });
    expect(readCreatedBytes('{"bytes": 1e3}')).toMatchObject({ ok: false });
    expect(readCreatedBytes('{"bytes": 9223372036854775808}')).toMatchObject({ ok: false });
    expect(readCreatedBytes('{"bytes": -1}')).toEqual({ ok: true, value: -1n });
  });
});

describe('stack traces', () => {
  test('are recognised from Node, Python and Go, and plain messages are not', () => {
    expect(looksLikeStackTrace('Error: boom\n    at main (/opt/p/index.js:3:7)')).toBe(true);
    expect(looksLikeStackTrace('Traceback (most recent call last):\n  File "p.py", line 3')).toBe(true);
    expect(looksLikeStackTrace('panic: runtime error\n\ngoroutine 1 [running]:')).toBe(true);
    expect(looksLikeStackTrace('volume 1234 needs 10 GiB but only 2 GiB is free at /srv/volumes')).toBe(false);
  });
});
