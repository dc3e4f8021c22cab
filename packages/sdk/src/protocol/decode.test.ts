import { describe, expect, it } from 'vitest';
import { decodeCreateOutput, decodeErrorOutput, decodeFingerprintOutput } from './decode.js';
import { loadVectors } from '../__fixtures__/vectors.js';

interface FingerprintCase {
  stdout: string;
  ok: boolean;
  version?: string;
  note?: string;
}
interface CreateCase {
  stdout: string;
  ok: boolean;
  path?: string;
  bytes?: bigint;
}

describe('fingerprint stdout is decoded as the agent decodes it (vectors: decode-fingerprint.json)', () => {
  for (const c of loadVectors<FingerprintCase>('decode-fingerprint')) {
    if (c.ok) {
      it(`accepts ${JSON.stringify(c.stdout)} as version ${c.version}`, () => {
        const decoded = decodeFingerprintOutput(c.stdout);
        expect(decoded.ok && decoded.value.version?.normalized).toBe(c.version);
      });
    } else {
      it(`refuses ${JSON.stringify(c.stdout)}${c.note ? ` (${c.note})` : ''}`, () => {
        const decoded = decodeFingerprintOutput(c.stdout);
        // A nil version decodes, as in Go; the caller refuses it (a real agent panics on it).
        if (decoded.ok) expect(decoded.value.version).toBeNull();
        else expect(decoded.error).not.toBe('');
      });
    }
  }

  it('refuses a version go-version cannot parse, such as "one"', () => {
    expect(decodeFingerprintOutput('{"version":"one"}')).toEqual({ ok: false, error: 'malformed version: one' });
  });

  it('decodes a missing version as nil, as Go does (the caller refuses it: a real agent crashes on it)', () => {
    expect(decodeFingerprintOutput('{}')).toEqual({ ok: true, value: { version: null } });
    expect(decodeFingerprintOutput('null')).toEqual({ ok: true, value: { version: null } });
  });
});

describe('create stdout is decoded as the agent decodes it (vectors: decode-create.json)', () => {
  for (const c of loadVectors<CreateCase>('decode-create')) {
    if (c.ok) {
      // An empty path is accepted here as the agent accepts it; execPlugin then refuses it.
      it(`accepts ${JSON.stringify(c.stdout)} as path ${JSON.stringify(c.path ?? '')}, ${c.bytes ?? 0n} bytes`, () => {
        expect(decodeCreateOutput(c.stdout)).toEqual({ ok: true, value: { path: c.path ?? '', bytes: c.bytes ?? 0n } });
      });
    } else {
      it(`refuses ${JSON.stringify(c.stdout)}`, () => {
        expect(decodeCreateOutput(c.stdout).ok).toBe(false);
      });
    }
  }

  it('keeps bytes beyond 2^53 exact', () => {
    expect(decodeCreateOutput('{"path":"/v","bytes":9223372036854775807}')).toEqual({
      ok: true,
      value: { path: '/v', bytes: 9223372036854775807n },
    });
  });

  it('says why bytes as 5.0 or as a string is refused, in Go words', () => {
    expect(decodeCreateOutput('{"path":"/v","bytes":5.0}')).toEqual({
      ok: false,
      error:
        'json: cannot unmarshal number 5.0 into Go struct field HostVolumePluginCreateResponse.bytes of type int64',
    });
    expect(decodeCreateOutput('{"path":"/v","bytes":"5"}')).toEqual({
      ok: false,
      error: 'json: cannot unmarshal string into Go struct field HostVolumePluginCreateResponse.bytes of type int64',
    });
  });
});

describe('decodeErrorOutput finds the message of a failed plugin', () => {
  it.each([
    ['{"error":"disk full"}', 'disk full'],
    ['{"Error":"disk full"}\n', 'disk full'],
    ['{"error":""}', ''], // decoded, empty: the agent still appends ": "
    ['{}', ''],
    ['{"error":5}', undefined],
    ['disk full', undefined],
    ['', undefined],
    ['{"error":"a"} trailing', undefined],
  ])('%j gives %j', (stdout, expected) => {
    expect(decodeErrorOutput(stdout)).toBe(expected);
  });

  // Go 1.26's encoding/json into Nomad's HostVolumePluginCreateResponse: a mismatch anywhere
  // fails the Unmarshal, and the agent then appends no message (host_volume_plugin.go, Create).
  it.each([
    ['{"error":"x","bytes":"5"}', undefined],
    ['{"error":"x","path":5}', undefined],
    ['{"bytes":1.5,"error":"x"}', undefined],
    ['{"error":"x","bytes":9223372036854775808}', undefined],
    ['{"error":"x","path":"/v","bytes":5}', 'x'],
  ])('a failed create: %j gives %j, as the agent decodes it into the whole create response', (stdout, expected) => {
    expect(decodeErrorOutput(stdout, 'create')).toBe(expected);
    expect(decodeErrorOutput(stdout, 'delete')).toBe('x');
  });
});
