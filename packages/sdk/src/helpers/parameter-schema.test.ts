import { describe, expect, it } from 'vitest';
import { parameterSchema } from './parameter-schema.js';
import { choice, flag, listOf, mkdirMode, mkdirOwner, size, text } from './parameter-fields.js';
import { pluginFailureOf } from '../__fixtures__/plugin-failure.js';

const schema = parameterSchema({
  fs: choice(['ext4', 'xfs'], { default: 'ext4', fixed: true }),
  mode: mkdirMode(),
  uid: mkdirOwner('uid'),
  noexec: flag(),
  mount_options: listOf(['noatime', 'nodev']),
  reserve: size(),
  label: text({ pattern: /^[a-z]{1,8}$/, describe: 'up to 8 lowercase letters' }),
});

const failure = pluginFailureOf;

describe('parameterSchema', () => {
  it('fills in the defaults when the spec has no parameters', () => {
    expect(schema.read(null)).toEqual({
      fs: 'ext4',
      mode: 0o700,
      uid: undefined,
      noexec: false,
      mount_options: [],
      reserve: 0n,
      label: '',
    });
  });

  it('reads every kind of value, mode and owner exactly as Nomad mkdir reads them', () => {
    const values = schema.read({
      fs: 'xfs',
      mode: '20000770',
      uid: '-1',
      noexec: 'T',
      mount_options: 'noatime, nodev,noatime',
      reserve: '1GiB',
      label: 'web',
    });
    expect(values).toEqual({
      fs: 'xfs',
      mode: 0o2770, // Go's setgid bit
      uid: undefined, // -1 leaves the owner
      noexec: true,
      mount_options: ['noatime', 'nodev'],
      reserve: 1024n ** 3n,
      label: 'web',
    });
    expect(schema.read({ mode: '2775' }).mode).toBe(0o775); // Unix setgid digits are dropped, as Nomad does
  });

  it('reports every problem in one EINVALIDPARAMETER failure, each naming its key', () => {
    const err = failure(() =>
      schema.read({ fs: 'btrfs', mode: '0o750', noexec: 'yes', mount_options: 'suid', colour: 'red', label: 'WEB' }),
    );
    expect(err.code).toBe('EINVALIDPARAMETER');
    expect(err.details.problems).toEqual([
      'unknown parameter "colour" (known: fs, mode, uid, noexec, mount_options, reserve, label)',
      'fs must be one of ext4, xfs, got "btrfs"',
      'invalid value for "mode": strconv.ParseUint: parsing "0o750": invalid syntax (mode is octal digits, such as "0750")',
      'noexec must be "true" or "false", got "yes"',
      'mount_options: "suid" is not allowed (allowed: noatime, nodev)',
      'label must be up to 8 lowercase letters, got "WEB"',
    ]);
    expect(err.message).toMatch(/^invalid parameters: unknown parameter "colour"/);
  });

  it('keeps a key named like an Object property as a key, never as the prototype', () => {
    const err = failure(() =>
      schema.read(JSON.parse('{"__proto__": "x", "constructor": "y"}') as Record<string, string>),
    );
    expect(err.details.problems).toEqual([
      'unknown parameter "__proto__" (known: fs, mode, uid, noexec, mount_options, reserve, label)',
      'unknown parameter "constructor" (known: fs, mode, uid, noexec, mount_options, reserve, label)',
    ]);
  });

  it('names what an update changed, comparing values as read', () => {
    expect(schema.changes({ mode: '750' }, { mode: '0750' })).toEqual([]);
    expect(schema.changes(null, { mode: '0750', noexec: 'true' })).toEqual(['mode', 'noexec']);
    expect(schema.changes({ fs: 'ext4' }, null)).toEqual([]); // ext4 is the default
  });

  it('refuses an update that changes a fixed parameter, naming both values and what to do', () => {
    const err = failure(() => schema.changes({ fs: 'ext4', mode: '0700' }, { fs: 'xfs', mode: '0750' }));
    expect(err.code).toBe('EPARAMETERFIXED');
    expect(err.message).toBe(
      'parameter fs cannot change on update (fs was "ext4" and the update asks for "xfs"); to change it, delete the volume and create it again',
    );
  });
});
