import { describe, expect, it } from 'vitest';
import { nomadSpelling } from './nomad-flags.js';

const flags = { detach: true, verbose: true, 'node-pool': true, t: true, json: true };

describe('flags spelled the Nomad way', () => {
  it("rewrites -flag and -flag=value of the command's own flags to the two-dash form", () => {
    expect(nomadSpelling(['-detach', '-node-pool=gpu', '-verbose', 'spec.hcl', '-json'], flags)).toEqual([
      '--detach',
      '--node-pool=gpu',
      '--verbose',
      'spec.hcl',
      '--json',
    ]);
  });

  it('leaves two-dash flags, one-letter flags, stdin, unknown words and everything after -- alone', () => {
    expect(nomadSpelling(['--detach', '-t', '{{.ID}}', '-', '-nope', '--', '-detach'], flags)).toEqual([
      '--detach',
      '-t',
      '{{.ID}}',
      '-',
      '-nope',
      '--',
      '-detach',
    ]);
  });
});
