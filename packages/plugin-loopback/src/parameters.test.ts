import { describe, expect, it } from 'vitest';
import { PluginFailure } from '@dhv/sdk/plugin';
import { parseParameters } from './parameters.js';

const problemsOf = (parameters: Record<string, string>) => {
  try {
    parseParameters(parameters);
  } catch (err) {
    expect(err).toBeInstanceOf(PluginFailure);
    return (err as PluginFailure).details.problems as string[];
  }
  throw new Error('expected the parameters to be refused');
};

describe('loopback parameters', () => {
  it('defaults to ext4, mode 0700, owner unchanged, no mount options, a sparse image', () => {
    expect(parseParameters(null)).toEqual({
      fs: 'ext4',
      mode: 0o700,
      uid: undefined,
      gid: undefined,
      mountOptions: [],
      preallocate: false,
    });
  });

  it('reads every parameter', () => {
    expect(
      parseParameters({
        fs: 'xfs',
        mode: '20000775',
        uid: '1000',
        gid: '-1',
        mount_options: 'noexec, nodev,noexec',
        preallocate: 'true',
      }),
    ).toEqual({
      fs: 'xfs',
      mode: 0o2775,
      uid: 1000,
      gid: undefined,
      mountOptions: ['noexec', 'nodev'],
      preallocate: true,
    });
  });

  it('names every unknown parameter and every bad value in one error', () => {
    const problems = problemsOf({
      size: '1G',
      fs: 'btrfs',
      mode: '0999',
      uid: 'root',
      mount_options: 'ro,suid,exec',
      preallocate: 'yes',
    });
    expect(problems).toEqual([
      expect.stringMatching(/unknown parameter "size"/),
      expect.stringMatching(/fs must be one of ext4, xfs, got "btrfs"/),
      expect.stringMatching(/^invalid value for "mode": strconv\.ParseUint: parsing "0999": invalid syntax/),
      expect.stringMatching(/^invalid value for "uid": strconv\.Atoi: parsing "root": invalid syntax/),
      expect.stringMatching(/mount_options: "suid", "exec" are not allowed/),
      expect.stringMatching(/preallocate must be "true" or "false"/),
    ]);
  });
});
