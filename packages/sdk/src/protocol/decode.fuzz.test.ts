import { describe, expect, it } from 'vitest';
import { GoJsonSyntaxError, goJsonToPlain, parseGoJson, type GoJsonValue } from '../go/json.js';
import { decodeCreateOutput, decodeErrorOutput, decodeFingerprintOutput } from './decode.js';
import { loadVectors } from '../__fixtures__/vectors.js';
import { seededRandom } from '../../../../test/support/seeded-random.js';
import { testSeed } from '../../../../test/support/seed.js';

/**
 * A seeded property test of the decoder: random and adversarial plugin outputs (valid
 * documents, mutations of them, deep nesting around Go's limit, huge numbers and strings,
 * random bytes) never make it throw anything but Go's syntax error, never overflow the
 * stack, agree with JSON.parse on what is valid, and decode valid documents to what was
 * written. Replay a failure with the seed it prints.
 */

const SEED = testSeed('DHV_FUZZ_SEED', 20261201, 'packages/sdk/src/protocol/decode.fuzz.test.ts');
const ROUNDS = Number(process.env.DHV_FUZZ_ROUNDS ?? 1500);

const random = seededRandom(SEED);
const int = (n: number) => Math.floor(random() * n);
const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;

const KEYS = ['path', 'Path', 'PATH', 'bytes', 'BYTES', 'version', 'Version', 'error', 'x', 'pa\u017fh', '', 'é'];
function randomValue(depth: number): unknown {
  const r = int(depth > 4 ? 5 : 8);
  switch (r) {
    case 0:
      return null;
    case 1:
      return random() < 0.5;
    case 2:
      return pick([0, -1, 5, 1.5, -0.25, 1e21, 9007199254740991, Math.floor(random() * 1e9)]);
    case 3:
      return pick([
        '',
        '/srv/x',
        '0.0.1',
        'v1.2',
        'one',
        'caf\u00e9',
        '\u2028',
        '\ud83d\ude00',
        '<&>',
        'a"b\\c',
        '\n\t',
      ]);
    case 4:
      return String.fromCharCode(...Array.from({ length: int(20) }, () => 0x20 + int(0x7f - 0x20)));
    case 5:
    case 6:
      return Object.fromEntries(Array.from({ length: int(5) }, () => [pick(KEYS), randomValue(depth + 1)]));
    default:
      return Array.from({ length: int(5) }, () => randomValue(depth + 1));
  }
}

function adversarial(): Uint8Array {
  switch (int(7)) {
    case 0: {
      const depth = pick([9_999, 10_000, 10_001, 50_000, int(20_000)]);
      return new TextEncoder().encode('{"path": "/x", "x": ' + '['.repeat(depth) + ']'.repeat(depth) + '}');
    }
    case 1:
      return new TextEncoder().encode(`{"path": "/x", "bytes": ${pick(['-', ''])}${'9'.repeat(1 + int(200_000))}}`);
    case 2:
      return new TextEncoder().encode(`{"path": "${'p'.repeat(int(2_000_000))}"}`);
    case 3:
      return Uint8Array.from(Array.from({ length: int(300) }, () => int(256)));
    case 4:
      return Uint8Array.from([
        0x7b,
        0x22,
        0x70,
        0x61,
        0x74,
        0x68,
        0x22,
        0x3a,
        0x22,
        ...Array.from({ length: int(50) }, () => 0x80 + int(128)),
        0x22,
        0x7d,
      ]);
    case 5:
      return new TextEncoder().encode('{"a":'.repeat(int(12_000)));
    default:
      return new TextEncoder().encode('['.repeat(int(200_000)));
  }
}

function mutate(text: string): string {
  const chars = [...text];
  for (let i = 0, n = 1 + int(3); i < n; i++) {
    const at = int(chars.length + 1);
    switch (int(3)) {
      case 0:
        chars.splice(at, 1);
        break;
      case 1:
        chars.splice(
          at,
          0,
          pick(['{', '}', '[', ']', ',', ':', '"', '\\', '0', '-', 'e', '.', ' ', 'x', 'n', '\u0000']),
        );
        break;
      default:
        chars[at] = pick(['{', '"', ',', '1']);
    }
  }
  return chars.join('');
}

/** Everything a plugin's output goes through; throws only what is a bug. */
function decodeAll(input: string | Uint8Array): void {
  for (const decode of [decodeCreateOutput, decodeFingerprintOutput]) {
    const result = decode(input);
    if (!result.ok) expect(typeof result.error).toBe('string');
  }
  const message = decodeErrorOutput(input);
  expect(message === undefined || typeof message === 'string').toBe(true);
}

function goAccepts(input: string | Uint8Array): { ok: true; value: GoJsonValue } | { ok: false } {
  try {
    return { ok: true, value: parseGoJson(input) };
  } catch (err) {
    expect(err, `only Go's syntax error may come out (seed ${SEED})`).toBeInstanceOf(GoJsonSyntaxError);
    return { ok: false };
  }
}

describe(`the JSON decoder under random and adversarial plugin output (seed ${SEED})`, () => {
  it('decodes every valid document as written, and agrees with JSON.parse on valid and invalid text', () => {
    for (let round = 0; round < ROUNDS; round++) {
      const doc = JSON.stringify(randomValue(0), null, int(2) ? undefined : int(4));
      const parsed = goAccepts(doc);
      expect(parsed.ok, `round ${round}: ${doc}`).toBe(true);
      if (parsed.ok) expect(goJsonToPlain(parsed.value), `round ${round}`).toEqual(JSON.parse(doc));
      decodeAll(doc);

      const mutated = mutate(doc);
      let jsOk = true;
      try {
        JSON.parse(mutated);
      } catch {
        jsOk = false;
      }
      expect(goAccepts(mutated).ok, `round ${round}: ${JSON.stringify(mutated)} (seed ${SEED})`).toBe(jsOk);
      decodeAll(mutated);
    }
  });

  it('never throws or overflows on adversarial output, up to the output cap', () => {
    for (let round = 0; round < 60; round++) {
      const input = adversarial();
      goAccepts(input);
      decodeAll(input);
    }
  });

  it('agrees with the Go vectors after a round trip through the byte decoder', () => {
    interface CreateCase {
      stdout: string;
      ok: boolean;
      path?: string;
      bytes?: bigint;
    }
    for (const c of loadVectors<CreateCase>('decode-create')) {
      const fromBytes = decodeCreateOutput(new TextEncoder().encode(c.stdout));
      expect(fromBytes).toEqual(decodeCreateOutput(c.stdout));
      expect(fromBytes.ok).toBe(c.ok);
      if (c.ok && fromBytes.ok) expect(fromBytes.value).toEqual({ path: c.path ?? '', bytes: c.bytes ?? 0n });
      decodeAll(mutate(c.stdout));
    }
  });
});
