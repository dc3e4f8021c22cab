import { describe, expect, it } from 'vitest';
import { encodeError, encodeResponse } from './encode.js';

describe('encodeResponse', () => {
  it('writes bigints as plain integers, exactly', () => {
    expect(encodeResponse({ path: '/v', bytes: 2n ** 63n - 1n })).toBe('{"path":"/v","bytes":9223372036854775807}');
  });

  it('leaves strings alone, even ones that look like its internal marker', () => {
    expect(JSON.parse(encodeResponse({ path: '\u0000bigint:5' }))).toEqual({ path: '\u0000bigint:5' });
  });

  it('writes an empty object for no response (delete)', () => {
    expect(encodeResponse(undefined)).toBe('{}');
  });
});

describe('encodeError', () => {
  it('writes the error document', () => {
    expect(encodeError('disk "full"')).toBe('{"error":"disk \\"full\\""}');
  });
});
