import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runConformance } from '../runner.js';
import type { CheckResult } from '../types.js';
import { HARNESS_FIXTURES } from '../../../../../test/support/kit.js';

/**
 * What the create checks say about the bash fixtures that each carry one create defect
 * (test/check-fixtures.test.ts holds their verdicts through `dhv check`): the reasons, in
 * the agent's words where the agent has some.
 */

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

async function results(fixture: string, only: string[]): Promise<Record<string, Omit<CheckResult, 'id'>>> {
  const report = await runConformance(join(HARNESS_FIXTURES, fixture), { only });
  return Object.fromEntries(report.results.map(({ id, ...rest }) => [id, rest]));
}

describe.concurrent('the create checks', () => {
  it('refuse a response without a path, a path that is no folder and bytes as a string, and skip what needs them', async () => {
    const [missing, absent, text] = await Promise.all([
      results('missing-path', ['create.path', 'create.idempotent']),
      results('path-not-exist', ['create.path']),
      results('bytes-as-string', ['create.bytes']),
    ]);
    expect(missing['create.path']).toMatchObject({
      status: 'fail',
      severity: 'required',
      reason: 'the response has no "path"',
    });
    expect(missing['create.idempotent']).toMatchObject({ status: 'skip', reason: 'needs create.path, which failed' });
    expect(absent['create.path']?.reason).toMatch(
      new RegExp(`^"path" is "/.*/volumes/${UUID}", which is not an existing directory$`),
    );
    expect(text['create.bytes']).toMatchObject({
      status: 'fail',
      reason: '"bytes" is the string "0"; it must be a JSON integer (the agent refuses anything else)',
    });
  });

  it("fail a repeated create in the agent's words, and one that wipes the volume for the data lost", async () => {
    const [again, wipes] = await Promise.all([
      results('create-not-idempotent', ['create.idempotent', 'create.volumes-dir-missing']),
      results('create-wipes-volume', ['create.idempotent']),
    ]);
    const path = `/.*/volumes/(${UUID})`;
    expect(again['create.idempotent']?.reason).toMatch(
      new RegExp(
        `^error creating volume "(${UUID})" with plugin "create-not-idempotent": exit status 1: could not create ${path}\n` +
          `the plugin's stderr ended: /bin/mkdir: cannot create directory '${path}': File exists$`,
      ),
    );
    expect(again['create.volumes-dir-missing']?.reason).toMatch(
      new RegExp(
        '^create with a volumes dir that does not exist yet failed: exit status 1: ' +
          `\\{"error": "could not create /.*/volumes-not-made-yet/${UUID}"\\}; ` +
          "create it \\(with its parents' permissions in mind\\) on first use$",
      ),
    );
    expect(wipes['create.idempotent']).toMatchObject({
      status: 'fail',
      reason:
        "after repeat 1, the file written into the volume (.dhv-check-marker) is gone: the volume's data was lost",
    });
  });

  it('cannot judge the capacity of a plugin that reports 0 bytes, and notes what it accepted', async () => {
    const r = await results('good-plugin', [
      'create.bytes',
      'create.bytes-within-capacity',
      'create.larger-capacity',
      'create.expands',
    ]);
    expect(r['create.bytes']).toMatchObject({ status: 'pass', notes: ['reports 0 bytes (0 B)'] });
    expect(r['create.bytes-within-capacity']).toMatchObject({
      status: 'skip',
      reason: 'the plugin reports 0 bytes: it does not claim to enforce capacity',
    });
    expect(r['create.larger-capacity']).toMatchObject({
      status: 'pass',
      notes: ['accepted capacity_min 32 MiB; reports 0 B'],
    });
    expect(r['create.expands']).toMatchObject({
      status: 'skip',
      reason: 'the plugin reports 0 bytes: it does not claim capacity, so there is nothing to expand',
    });
  });
});
