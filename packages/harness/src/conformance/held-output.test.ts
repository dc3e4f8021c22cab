import { describe, expect, it } from 'vitest';
import { heldOutputFailure, heldOutputFault, heldOutputStop, STDIO_RELEASED } from './held-output.js';

/** What dhv check says when a plugin run exits with a leftover process still holding its output. */

const fault = (holders: Parameters<typeof heldOutputFault>[2]['outputHolders']) =>
  heldOutputFault('environment.dhv-only', 'create', { outputHolders: holders });

describe('a held output', () => {
  it('is a required failure of errors.stdio-released, naming each holder once with what it holds', () => {
    const result = heldOutputFailure(
      fault([
        { pid: 4711, command: '/usr/bin/sleep', holds: 'stdout' },
        { pid: 4711, command: '/usr/bin/sleep', holds: 'stderr' },
        { pid: 4712, command: '?', holds: 'stderr' },
      ]),
    );
    expect(result).toMatchObject({ id: STDIO_RELEASED, status: 'fail', severity: 'required', notes: [] });
    expect(result.reason).toBe(
      'the create of environment.dhv-only left process 4711 (/usr/bin/sleep) holding its stdout and stderr, ' +
        'process 4712 (?) holding its stderr after it exited: a real agent waits for it as long as it lives, ' +
        'past the 60s deadline; start helpers with their output redirected (>/dev/null 2>&1), or wait for them',
    );
  });

  it('stops the run, counting the checks not run, and says "a process" when none could be named', () => {
    expect(heldOutputStop(fault([]), 1)).toBe(
      'the create of environment.dhv-only left a process holding its stdout or stderr after it exited ' +
        '(errors.stdio-released): every further operation would wait for it, so 1 check was not run',
    );
    expect(heldOutputStop(fault([{ pid: 9, command: '/bin/sh', holds: 'stdout' }]), 12)).toMatch(
      /holding its stdout after it exited \(errors\.stdio-released\): .*, so 12 checks were not run$/,
    );
  });
});
