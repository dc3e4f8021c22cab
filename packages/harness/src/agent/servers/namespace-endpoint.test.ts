import { describe, expect, it } from 'vitest';
import {
  noSuchNamespaceForJob,
  noSuchNamespaceForVolume,
  refuseInvalidNamespace,
  refuseNamespaceDelete,
} from './namespace-endpoint.js';

/** What Nomad's servers refuse of namespaces, in the words of nomad/namespace_endpoint.go and Namespace.Validate. */

const REGEX = '^[a-zA-Z0-9-]{1,128}$';
const caught = (fn: () => void) => {
  try {
    fn();
  } catch (err) {
    return err as Error & { code: string; details: Record<string, unknown> };
  }
  throw new Error('nothing was refused');
};

describe('a namespace apply', () => {
  it('accepts a name of 1 to 128 letters, digits and dashes with a description of at most 256 characters', () => {
    expect(() => refuseInvalidNamespace('a', '')).not.toThrow();
    expect(() => refuseInvalidNamespace(`Team-7${'x'.repeat(122)}`, 'd'.repeat(256))).not.toThrow();
  });

  it('refuses a bad name and a long description together, as go-multierror lists them, then says what is allowed', () => {
    const err = caught(() => refuseInvalidNamespace('no/such', 'd'.repeat(257)));
    expect(err.message).toBe(
      'Invalid namespace "no/such": 2 errors occurred:\n' +
        `\t* invalid name "no/such". Must match regex ${REGEX}\n` +
        '\t* description longer than 256\n' +
        'A name is 1 to 128 letters, digits and dashes; a description at most 256 characters.',
    );
    expect(err.code).toBe('NAMESPACE_INVALID');
    expect(err.details).toEqual({
      namespace: 'no/such',
      problems: [`invalid name "no/such". Must match regex ${REGEX}`, 'description longer than 256'],
    });
    expect(caught(() => refuseInvalidNamespace('x'.repeat(129), '')).message).toContain('1 error occurred:\n');
    expect(caught(() => refuseInvalidNamespace('', '')).message).toMatch(/^Invalid namespace "": 1 error occurred:/);
  });

  it("quotes a name as Go's %q does: a control or invisible character escaped, other letters as they are", () => {
    expect(caught(() => refuseInvalidNamespace('a\x7fb', '')).message).toMatch(
      /^Invalid namespace "a\\x7fb": 1 error occurred:\n\t\* invalid name "a\\x7fb"\. /,
    );
    expect(caught(() => refuseInvalidNamespace('caf\u00e9\u00a0', '')).message).toMatch(
      /^Invalid namespace "café\\u00a0": /,
    );
  });
});

describe('a volume or job in a namespace that does not exist', () => {
  it("is refused in the servers' words, with how to make it when the name could be one", () => {
    const err = noSuchNamespaceForVolume('analytics');
    expect(err.message).toBe(
      'volume validation failed: no such namespace "analytics"\n' +
        'Create it with dhv namespace apply analytics; dhv namespace list shows the namespaces there are.',
    );
    expect(err.code).toBe('NAMESPACE_NOT_FOUND');
    expect(noSuchNamespaceForVolume('no such').message).toBe(
      'volume validation failed: no such namespace "no such"\ndhv namespace list shows the namespaces there are.',
    );
    expect(noSuchNamespaceForVolume('tab\there').message.split('\n')[0]).toBe(
      'volume validation failed: no such namespace "tab\\there"',
    );
  });

  it("names the job and the namespace as the register validator does, Go's quoting included", () => {
    expect(noSuchNamespaceForJob('web', 'analytics')).toBe('job "web" is in nonexistent namespace "analytics"');
    expect(noSuchNamespaceForJob('w\x7f', 'a\u200b')).toBe('job "w\\x7f" is in nonexistent namespace "a\\u200b"');
  });
});

describe('a namespace delete', () => {
  const idle = { nonTerminalJobs: false, nonTerminalAllocs: false };

  it('goes ahead for a namespace that exists and holds nothing live (host volumes stay, as in Nomad)', () => {
    expect(() => refuseNamespaceDelete('analytics', true, idle)).not.toThrow();
  });

  it('refuses default and a missing namespace first, whatever runs in them', () => {
    const dflt = caught(() =>
      refuseNamespaceDelete('default', true, { nonTerminalJobs: true, nonTerminalAllocs: true }),
    );
    expect([dflt.code, dflt.message]).toEqual([
      'NAMESPACE_IN_USE',
      'can not delete default namespace\nThe default namespace always exists, as in Nomad.',
    ]);
    const missing = caught(() => refuseNamespaceDelete('nope', false, idle));
    expect([missing.code, missing.message]).toEqual([
      'NAMESPACE_NOT_FOUND',
      'namespace not found\nRun dhv namespace list to see the namespaces there are.',
    ]);
  });

  it('lists live jobs and allocations as one multierror naming the region, then how to stop them', () => {
    const both = caught(() =>
      refuseNamespaceDelete('analytics', true, { nonTerminalJobs: true, nonTerminalAllocs: true }),
    );
    expect(both.message).toBe(
      '2 errors occurred:\n' +
        '\t* namespace "analytics" has non-terminal jobs in regions: [global]\n' +
        '\t* namespace "analytics" has non-terminal allocations in regions: [global]\n' +
        'Stop its jobs first (dhv job status lists them; dhv job stop -namespace analytics <job>), then delete the namespace.',
    );
    expect(both.code).toBe('NAMESPACE_IN_USE');
    const allocs = caught(() =>
      refuseNamespaceDelete('analytics', true, { nonTerminalJobs: false, nonTerminalAllocs: true }),
    );
    expect(allocs.message.split('\n').slice(0, 2)).toEqual([
      '1 error occurred:',
      '\t* namespace "analytics" has non-terminal allocations in regions: [global]',
    ]);
  });
});
