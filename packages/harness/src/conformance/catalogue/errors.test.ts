import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runConformance } from '../runner.js';
import type { CheckResult } from '../types.js';
import { HARNESS_FIXTURES } from '../../../../../test/support/kit.js';

/**
 * What the errors and environment checks say about the bash fixtures that each carry one
 * defect (test/check-fixtures.test.ts holds every fixture's verdict, through `dhv check`):
 * here, in process, the words a plugin author reads.
 */

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

async function results(fixture: string, only: string[]): Promise<Record<string, Omit<CheckResult, 'id'>>> {
  const report = await runConformance(join(HARNESS_FIXTURES, fixture), { only });
  return Object.fromEntries(report.results.map(({ id, ...rest }) => [id, rest]));
}

describe.concurrent('the errors and environment checks', () => {
  it('pass the correct plugin, and cannot judge injected faults in a plugin that does not read the variable', async () => {
    const r = await results('good-plugin', ['errors', 'environment']);
    expect(Object.entries(r).filter(([, v]) => v.status !== 'pass')).toEqual([
      [
        'errors.injected-failures-leave-nothing',
        expect.objectContaining({
          status: 'skip',
          reason:
            'cannot judge: create succeeded with DHVSDK_FAIL_AT=step:1 and with tool:1, so no fault could be injected; ' +
            'only a plugin built on the dhv SDK reads the variable, and only at its ctx.step and runTool calls',
        }),
      ],
    ]);
  });

  it('fail a plugin that needs HOME, quoting its error, and say what the agent gives it', async () => {
    const r = await results('needs-home', ['environment']);
    expect(r['environment.dhv-only']).toMatchObject({ status: 'fail', severity: 'required' });
    expect(r['environment.dhv-only']!.reason).toBe(
      `create fails with only the DHV_* variables (exit status 1: ${join(HARNESS_FIXTURES, 'needs-home')}: line 19: HOME: ` +
        'this plugin reads its settings from HOME) but works with PATH and HOME set: ' +
        'the agent replaces the environment, so find programs by absolute path and do not read HOME',
    );
  });

  it('name a failure whose stdout is not {"error": ...}, as Nomad\'s guide writes plugins, and a create that ignores an unknown parameter', async () => {
    const r = await results('nomad-guide-style', [
      'errors.failure-output',
      'errors.failure-error-json',
      'errors.failed-create-leaves-nothing',
    ]);
    expect(r['errors.failure-output']).toMatchObject({
      status: 'fail',
      severity: 'recommended',
      reason: 'unknown operation: stdout was "unknown operation: dhv-check-unknown-operation"',
    });
    expect(r['errors.failure-error-json']?.reason).toBe(
      'no {"error": ...} on stdout for: unknown operation (exit status 1: unknown operation: dhv-check-unknown-operation)',
    );
    expect(r['errors.failed-create-leaves-nothing']).toMatchObject({
      status: 'pass',
      notes: ['accepted an unknown parameter (dhv-check-unknown-parameter)'],
    });
  });

  it('name what a failed create left behind, where the agent never calls delete', async () => {
    const r = await results('partial-create', ['errors.failed-create-leaves-nothing']);
    expect(r['errors.failed-create-leaves-nothing']).toMatchObject({ status: 'fail', severity: 'recommended' });
    expect(r['errors.failed-create-leaves-nothing']!.reason).toMatch(
      new RegExp(
        '^create with an unknown parameter \\(dhv-check-unknown-parameter\\) failed ' +
          `\\(exit status 1: \\{"error": "this plugin takes no parameters"\\}\\) but left behind: volumes/${UUID}/$`,
      ),
    );
  });

  it('catch a stack trace and an unknown operation taken as done, and only warn of logs on the stdout of a delete', async () => {
    const [traced, exits0, logs] = await Promise.all([
      results('stack-trace-on-stdout', ['errors.no-stack-traces']),
      results('unknown-op-exits-0', ['errors.unknown-operation']),
      results('log-on-stdout', ['errors.stdout-only-json']),
    ]);
    expect(traced['errors.no-stack-traces']).toMatchObject({
      status: 'fail',
      reason: 'stack trace on stdout of: unknown operation; write it to stderr',
    });
    expect(exits0['errors.unknown-operation']).toMatchObject({
      status: 'fail',
      reason: 'operation "dhv-check-unknown-operation" exited 0; a future agent operation would be taken as done',
    });
    expect(logs['errors.stdout-only-json']).toMatchObject({ status: 'warn', severity: 'required' });
    expect(logs['errors.stdout-only-json']!.reason).toMatch(
      new RegExp(
        `^delete: stdout was "removing /.*/volumes/${UUID}"; delete \\(repeated\\): stdout was "removing /.*"; ` +
          `delete \\(never created\\): stdout was "removing /.*"; the agent ignores it after a delete, but logs belong on stderr$`,
      ),
    );
  });
});
