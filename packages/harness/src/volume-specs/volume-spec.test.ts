import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentError } from '../errors/agent-error.js';
import { parseHclOrJson } from '../config/read-document.js';
import { MAX_ENV_STRING_BYTES, nameWarnings, validateVolumeSpec, readVolumeSpec } from './volume-spec.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

function problems(doc: Record<string, unknown>, purpose: 'create' | 'register' = 'create'): string[] {
  try {
    validateVolumeSpec(doc, purpose);
  } catch (err) {
    expect(err).toBeInstanceOf(AgentError);
    return (err as AgentError).details.problems as string[];
  }
  return [];
}

const fromStdin = (text: string) => readVolumeSpec('-', 'create', Readable.from([text]));

describe("volume specs, read as Nomad's CLI and servers read them", () => {
  it('refuses a relative host_path to register: each dhv command runs from its own folder', async () => {
    const doc = await parseHclOrJson('type = "host"\nname = "r"\nhost_path = "srv/data"\n', 'r.hcl');
    expect(() => validateVolumeSpec(doc, 'register')).toThrow('host_path must be an absolute path, got "srv/data"');
  });

  it('reads human sizes as go-humanize does', () => {
    const spec = validateVolumeSpec(
      { type: 'host', name: 'a', plugin_id: 'mkdir', capacity_min: '50MB', capacity_max: '100GiB' },
      'create',
    );
    expect(spec.capacityMinBytes).toBe(50_000_000n);
    expect(spec.capacityMaxBytes).toBe(107_374_182_400n);
  });

  it('refuses capacity_min without capacity_max, as the servers do: an unset maximum is 0', () => {
    expect(problems({ type: 'host', name: 'a', plugin_id: 'mkdir', capacity_min: '1GB' })).toEqual([
      'capacity_max (0) must be larger than capacity_min (1000000000)',
    ]);
    expect(problems({ type: 'host', name: 'a', plugin_id: 'mkdir', capacity_min: '1GB', capacity_max: '1GB' })).toEqual(
      [],
    );
    expect(problems({ type: 'host', name: 'a', plugin_id: 'mkdir', capacity_max: '1GB' })).toEqual([]);
  });

  it('refuses sizes Nomad wraps to negative (2^63 bytes and more), saying what Nomad makes of them in exact integers', () => {
    expect(
      problems({ type: 'host', name: 'a', plugin_id: 'mkdir', capacity_min: '8EiB', capacity_max: '8EiB' }),
    ).toEqual([
      expect.stringMatching(/^capacity_min is -9223372036854775808 to Nomad: .*dhv refuses it/),
      expect.stringMatching(/^capacity_max is -9223372036854775808 to Nomad: /),
    ]);
    // The largest int64 itself, written out: go-humanize reads it through a float64, so it is 2^63 and wraps.
    expect(
      problems({ type: 'host', name: 'a', capacity_min: '9223372036854775807', capacity_max: '9223372036854775807' }),
    ).toEqual([
      expect.stringMatching(/^capacity_min is -9223372036854775808 to Nomad: .*give at most 9223372036854774784 bytes/),
      expect.stringMatching(/^capacity_max is -9223372036854775808 to Nomad: /),
    ]);
    // The largest size that survives the float64 is taken, exactly.
    const largest = validateVolumeSpec(
      { type: 'host', name: 'a', capacity_min: '9223372036854774784', capacity_max: '9223372036854774784' },
      'create',
    );
    expect(largest.capacityMaxBytes).toBe(9223372036854774784n);
    // Past 2^64 go-humanize refuses it, echoing the input exactly.
    expect(problems({ type: 'host', name: 'a', capacity_max: '18446744073709551617' })).toEqual([
      'Error decoding the volume definition: invalid capacity_max: could not parse value as bytes: too large: 18446744073709551617',
    ]);
  });

  it('warns of a size past 2^53 that Nomad rounds', () => {
    const spec = validateVolumeSpec(
      { type: 'host', name: 'a', capacity_min: '9007199254740993', capacity_max: '9007199254740993' },
      'create',
    );
    expect(spec.capacityMinBytes).toBe(9007199254740992n);
    expect(spec.warnings).toContainEqual(
      expect.stringMatching(/^capacity_min "9007199254740993" is 9007199254740992 to Nomad/),
    );
  });

  it("reports every bad field at once, in the words of Nomad's servers", () => {
    expect(problems({ type: 'host', id: 'nope', capacity_min: '2GB', capacity_max: '1GB' })).toEqual([
      'invalid ID "nope"',
      'missing name',
      'capacity_max (1000000000) must be larger than capacity_min (2000000000)',
    ]);
    // A nested map in parameters stops Nomad's CLI before any server sees the spec.
    expect(problems({ type: 'host', name: 'a', parameters: { a: { b: 1 } } })).toEqual([
      "Error decoding the volume definition: decoding failed due to the following error(s):\n\n'Parameters[0][a]' expected type 'string', got unconvertible type '[]map[string]interface {}'",
    ]);
    expect(() => validateVolumeSpec({ type: 'host', capacity_min: '1' }, 'create', 'v.hcl')).toThrow(
      /^volume validation failed: 2 errors occurred:\n\t\* missing name\n\t\* capacity_max \(0\) must be larger than capacity_min \(1\)\ncapacity_min is set without capacity_max, which Nomad then reads as 0: .*\nFix the volume specification v\.hcl/,
    );
    // One problem: Nomad's servers' words whole, prefix included, dhv's advice on the line below.
    expect(() => validateVolumeSpec({ type: 'host', name: 'a', capacity_min: '1' }, 'create', 'v.hcl')).toThrow(
      /^volume validation failed: capacity_max \(0\) must be larger than capacity_min \(1\)\ncapacity_min is set without capacity_max, .*\nFix the volume specification v\.hcl/,
    );
    // What dhv refuses beyond Nomad comes below Nomad's line.
    expect(() =>
      validateVolumeSpec({ type: 'host', name: '', capacity_min: '8EiB', capacity_max: '8EiB' }, 'create', 'v.hcl'),
    ).toThrow(/^volume validation failed: missing name\ncapacity_min is -9223372036854775808 to Nomad: /);
  });

  it('decodes values weakly, as mapstructure does: numbers as Go prints them, booleans as 1 and 0', () => {
    const spec = validateVolumeSpec(
      {
        type: 'host',
        name: 7,
        plugin_id: 'mkdir',
        parameters: [
          { uid: 1000, ratio: 1.5, big: 1e21, tiny: 1e-7 },
          { fast: true, slow: false },
        ],
      },
      'create',
    );
    expect(spec.name).toBe('7');
    expect(spec.parameters).toEqual({
      uid: '1000',
      ratio: '1.5',
      big: '1000000000000000000000',
      tiny: '0.0000001',
      fast: '1',
      slow: '0',
    });
  });

  it('takes type in any case, and gives a spec without plugin_id the plugin "default"', () => {
    const spec = validateVolumeSpec({ type: 'HOST', name: 'a' }, 'create');
    expect(spec.pluginId).toBe('default');
    expect(problems({ type: 'csi', name: 'a' })).toEqual([expect.stringMatching(/^unknown volume type: csi/)]);
    expect(problems({ name: 'a' })).toEqual(['Error unknown volume type: ']);
    expect(
      validateVolumeSpec({ type: 'host', name: 'a', id: '1e1d4540-14f9-2515-8502-24d46291717d' }, 'create').pluginId,
    ).toBe('');
  });

  it('gives a volume without capability blocks one single-node-writer file-system capability', () => {
    const spec = validateVolumeSpec({ type: 'host', name: 'a', plugin_id: 'mkdir' }, 'create');
    expect(spec.capabilities).toEqual([{ accessMode: 'single-node-writer', attachmentMode: 'file-system' }]);
    expect(spec.parameters).toBeNull();
    expect(spec.namespace).toBe('default');
  });

  it('checks capability modes and constraints as the servers do, and refuses distinct_hosts and distinct_property', () => {
    const found = problems({
      type: 'host',
      name: 'a',
      plugin_id: 'mkdir',
      capability: [
        { access_mode: 'multi-node-writer', attachment_mode: 'file-system' },
        { access_mode: 'single-node-writer', attachment_mode: 'nfs' },
      ],
      constraint: [
        { distinct_hosts: true },
        { distinct_property: '${meta.rack}' },
        { attribute: '${attr.kernel.name}' },
        { attribute: '${attr.x}', operator: 'near', value: '1' },
      ],
    });
    expect(found).toEqual([
      'invalid access mode: "multi-node-writer"',
      'invalid attachment mode: "nfs"',
      'invalid constraint distinct_hosts: host volumes of the same name are always on distinct hosts',
      'invalid constraint distinct_property: host volumes of the same name are always on distinct hosts',
      'invalid constraint: 1 error occurred:\n\t* Operator "=" requires an RTarget\n\n',
      'invalid constraint: 1 error occurred:\n\t* Unknown constraint type "near"\n\n',
    ]);
  });

  it("reads distinct_property's count with Go's ParseUint, which reports an overflow before a bad digit", () => {
    const count = (value: string) =>
      problems({
        type: 'host',
        name: 'a',
        plugin_id: 'mkdir',
        constraint: [{ attribute: '${meta.rack}', operator: 'distinct_property', value }],
      })[0];
    expect(count('99999999999999999999x')).toBe(
      'invalid constraint: 1 error occurred:\n\t* Failed to convert RTarget "99999999999999999999x" to uint64: strconv.ParseUint: parsing "99999999999999999999x": value out of range\n\n',
    );
    expect(count('2x')).toBe(
      'invalid constraint: 1 error occurred:\n\t* Failed to convert RTarget "2x" to uint64: strconv.ParseUint: parsing "2x": invalid syntax\n\n',
    );
    expect(count('0')).toBe(
      'invalid constraint: 1 error occurred:\n\t* Distinct Property must have an allowed count of 1 or greater: 0 < 1\n\n',
    );
  });

  it('parses constraint blocks into {attribute, operator, value}, shorthands included', () => {
    const spec = validateVolumeSpec(
      {
        type: 'host',
        name: 'a',
        constraint: [
          { attribute: '${attr.kernel.name}', value: 'linux' },
          { attribute: '${attr.nomad.version}', version: '>= 1.10' },
          { attribute: '${meta.disk}', operator: 'is_set' },
        ],
      },
      'create',
    );
    expect(spec.constraints).toEqual([
      { attribute: '${attr.kernel.name}', operator: '=', value: 'linux' },
      { attribute: '${attr.nomad.version}', operator: 'version', value: '>= 1.10' },
      { attribute: '${meta.disk}', operator: 'is_set', value: '' },
    ]);
  });

  it('needs host_path, not plugin_id, to register', () => {
    expect(problems({ type: 'host', name: 'a' }, 'register')).toEqual([expect.stringMatching(/^missing host_path/)]);
    expect(problems({ type: 'host', name: 'a', host_path: '/srv/a' }, 'register')).toEqual([]);
  });

  it('reads HCL with blocks, and JSON, from stdin', async () => {
    const hcl =
      'type = "host"\nname = "x"\nplugin_id = "mkdir"\nparameters {\n  mode = "0755"\n  uid = 1000\n}\ncapability {\n  access_mode = "single-node-reader-only"\n  attachment_mode = "block-device"\n}\n';
    const spec = await fromStdin(hcl);
    expect(spec.parameters).toEqual({ mode: '0755', uid: '1000' });
    expect(spec.capabilities).toEqual([{ accessMode: 'single-node-reader-only', attachmentMode: 'block-device' }]);
    const json = await fromStdin(
      JSON.stringify({ type: 'host', name: 'y', plugin_id: 'p', capacity_min: 1024, capacity_max: 2048 }),
    );
    expect(json.capacityMinBytes).toBe(1024n);
  });

  it("refuses an unquoted hex parameter past int64 in Nomad's decoder words, not by the octal-and-hex warning", async () => {
    await expect(
      fromStdin('type = "host"\nname = "a"\nplugin_id = "mkdir"\nparameters {\n  x = 0xFFFFFFFFFFFFFFFFFFFF\n}\n'),
    ).rejects.toMatchObject({
      code: 'SPEC_INVALID',
      message: expect.stringMatching(
        /^Error decoding the volume definition: strconv.ParseInt: parsing "0xFFFFFFFFFFFFFFFFFFFF": value out of range\nFix the volume specification <stdin>/,
      ),
    });
  });

  it('names the file and the parser problem for a spec that is not HCL', async () => {
    await expect(fromStdin('name = "a"\n}\n')).rejects.toMatchObject({
      code: 'SPEC_INVALID',
      message: expect.stringMatching(
        /^Error parsing the volume type: parse error: At 2:1: expected: IDENT \| STRING \| ASSIGN \| LBRACE got: RBRACE\nFix the volume specification <stdin>/,
      ),
    });
  });
});

describe('bad input gets a short, clear error', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await removeTempDir(dir);
    dir = undefined;
  });

  it('refuses a 50 MB random-binary spec by its size, without parsing it', async () => {
    dir = await tempDir('spec');
    const file = join(dir, 'huge.hcl');
    await writeFile(file, randomBytes(50 * 1024 * 1024));
    const err = await readVolumeSpec(file, 'create').catch((e: unknown) => e as AgentError);
    expect(err).toMatchObject({ code: 'SPEC_INVALID' });
    expect((err as Error).message).toMatch(/is 52428800 bytes: dhv reads at most 262144 bytes/);
  });

  it('refuses a FIFO as the spec at once instead of waiting for a writer', async () => {
    dir = await tempDir('spec');
    const fifo = join(dir, 'spec.hcl');
    execFileSync('mkfifo', [fifo]);
    await expect(readVolumeSpec(fifo, 'create')).rejects.toThrow(/not a regular file/);
  });

  it('refuses a 1 MB spec on stdin by its size too', async () => {
    const err = await readVolumeSpec(
      '-',
      'create',
      Readable.from([Buffer.alloc(500_000, 0x20), Buffer.alloc(500_000, 0x20)]),
    ).catch((e: unknown) => e as Error);
    expect((err as Error).message).toMatch(/^<stdin> is more than 262144 bytes/);
  });

  it('refuses a binary spec as not text, and gives a bad HCL spec of 200 KB an error of a few hundred characters', async () => {
    const binary = await readVolumeSpec('-', 'create', Readable.from([randomBytes(200_000)])).catch(
      (e: unknown) => e as Error,
    );
    expect((binary as Error).message).toMatch(
      /^<stdin> is not (a text file: it holds a NUL byte at offset \d+|UTF-8 text)/,
    );
    const garbage = Array.from({ length: 200_000 }, (_, i) => '!@$%^&*;:<>?'[i % 12]).join('');
    const bad = await fromStdin(garbage).catch((e: unknown) => e as Error);
    expect((bad as Error).message).toMatch(/^Error parsing the volume type: parse error: At 1:1: /);
    expect((bad as Error).message).toMatch(/Fix the volume specification <stdin>/);
    expect((bad as Error).message.length).toBeLessThan(1000);
  });

  it('refuses JSON and HCL nested 100,000 deep with a clear error, not a stack overflow', async () => {
    for (const text of [
      `{"a": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
      `a = ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`,
      `${'a{'.repeat(80_000)}${'}'.repeat(80_000)}`,
    ]) {
      const err = await fromStdin(text).catch((e: unknown) => e as Error);
      expect((err as Error).message).toMatch(/^<stdin> is nested more than 1000 levels deep/);
    }
    await expect(parseHclOrJson(`${'a {\n'.repeat(100_000)}${'}\n'.repeat(100_000)}`, 'deep.hcl')).rejects.toThrow(
      /^deep\.hcl is nested more than 1000 levels deep/,
    );
  });

  it('refuses a name or parameters too large for a plugin environment, naming the kernel limit', () => {
    expect(problems({ type: 'host', name: 'n'.repeat(200_000) })).toEqual([
      `name is too large: DHV_VOLUME_NAME would be 200017 bytes, and the kernel starts no program with an environment string over ${MAX_ENV_STRING_BYTES} bytes (MAX_ARG_STRLEN)`,
    ]);
    expect(problems({ type: 'host', name: 'a', parameters: { big: 'x'.repeat(1_000_000) } })[0]).toMatch(
      /^parameters is too large: DHV_PARAMETERS would be 1000026 bytes/,
    );
    expect(problems({ type: 'host', name: 'a', parameters: { big: 'x'.repeat(100_000) } })).toEqual([]);
  });

  it('refuses a NUL in a name, which no environment can carry', () => {
    expect(problems({ type: 'host', name: 'a\0b' })).toEqual([
      'name holds a NUL byte, which no environment variable can carry (DHV_VOLUME_NAME)',
    ]);
  });

  it("accepts the names Nomad's servers accept (they only refuse an empty one)", () => {
    for (const name of ['two\nlines', 'cr\r', '\x1b[31mred', '   ']) {
      expect(problems({ type: 'host', name })).toEqual([]);
      expect(nameWarnings(name)).toEqual([
        expect.stringMatching(/(holds control characters|is only white space): Nomad's servers accept it/),
      ]);
    }
    expect(nameWarnings('data')).toEqual([]);
  });
});

describe("numbers as Nomad's HCL reader sees them", () => {
  it('reads an unquoted 0755 as octal and 0x1ed as hexadecimal (493), as HCL 1 does, and says so', async () => {
    const spec = await fromStdin(
      'type = "host"\nname = "o"\nparameters {\n  mode = 0755\n  uid = 0x10\n  gid = 1000\n  label = "0755"\n}\n',
    );
    expect(spec.parameters).toEqual({ mode: '493', uid: '16', gid: '1000', label: '0755' });
    expect(spec.warnings).toEqual([
      'the unquoted number 0755 is 493 to Nomad\'s HCL reader (octal); quote it ("0755") to keep the digits',
      'the unquoted number 0x10 is 16 to Nomad\'s HCL reader (hexadecimal); quote it ("0x10") to keep the digits',
    ]);
  });

  it('leaves numbers in strings, comments and heredocs alone', async () => {
    const spec = await fromStdin(
      'type = "host" # mode 0755\nname = <<EOT\nn0755\n0755\nEOT\nparameters {\n  x = "a 0755"\n}\n',
    );
    expect(spec.name).toBe('n0755\n0755\n');
    expect(spec.parameters).toEqual({ x: 'a 0755' });
    expect(spec.warnings?.filter((w) => w.includes('unquoted'))).toEqual([]);
  });
});

describe('warnings for what Nomad ignores', () => {
  it('names the nearest known key for a misspelt one, and ignores the key as Nomad does', async () => {
    const spec = await fromStdin('type = "host"\nname = "k"\nplugin = "mkdir"\ncapacity_mn = "1GiB"\ncolour = "red"\n');
    expect(spec.pluginId).toBe('default');
    expect(spec.capacityMinBytes).toBe(0n);
    expect(spec.warnings).toEqual([
      'unknown key "plugin" is ignored, as Nomad ignores it (did you mean plugin_id?)',
      'unknown key "capacity_mn" is ignored, as Nomad ignores it (did you mean capacity_min?)',
      'unknown key "colour" is ignored, as Nomad ignores it',
    ]);
  });
});
