import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runConformance } from '../runner.js';
import type { CheckResult } from '../types.js';
import { HARNESS_FIXTURES } from '../../../../../test/support/kit.js';

/**
 * What the delete checks say about the bash fixtures that each carry one delete defect
 * (test/check-fixtures.test.ts holds their verdicts through `dhv check`).
 */

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const USE_CREATED_PATH =
  "remove DHV_CREATED_PATH, except when it equals DHV_VOLUMES_DIR (the agent's cleanup delete): then remove DHV_VOLUMES_DIR/DHV_VOLUME_ID";

async function results(fixture: string, only: string[]): Promise<Record<string, Omit<CheckResult, 'id'>>> {
  const report = await runConformance(join(HARNESS_FIXTURES, fixture), { only });
  return Object.fromEntries(report.results.map(({ id, ...rest }) => [id, rest]));
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe.concurrent('the delete checks', () => {
  it("fail a second delete and a delete of a volume never created, in the agent's words", async () => {
    const [twice, never] = await Promise.all([
      results('delete-not-idempotent', ['delete.idempotent']),
      results('delete-missing-fails', ['delete.never-created']),
    ]);
    expect(twice['delete.idempotent']?.reason).toMatch(
      new RegExp(
        `^the second delete failed: error deleting volume "(${UUID})" with plugin "delete-not-idempotent": ` +
          `exit status 1: could not remove /.*/volumes/\\1$`,
      ),
    );
    expect(never['delete.never-created']?.reason).toMatch(
      new RegExp(
        `^delete of a volume that does not exist failed: error deleting volume "(${UUID})" with plugin ` +
          '"delete-missing-fails": exit status 1: volume \\1 was never created$',
      ),
    );
  });

  it("fail a cleanup delete that removes the volumes dir, as Nomad's docs literally say to", async () => {
    const r = await results('docs-literal-delete', ['delete.cleanup-call']);
    expect(r['delete.cleanup-call']).toMatchObject({
      status: 'fail',
      severity: 'required',
      reason: `the cleanup delete destroyed what was not its volume: the volumes dir itself was removed; ${USE_CREATED_PATH}`,
    });
  });

  it('name every volume a delete destroyed that was not its own, and a delete that ignores DHV_CREATED_PATH', async () => {
    const [all, ignores] = await Promise.all([
      results('delete-removes-all', ['delete.cleanup-call', 'delete.others-untouched']),
      results('ignores-created-path', ['delete.uses-created-path']),
    ]);
    expect(all['delete.cleanup-call']?.reason).toMatch(
      new RegExp(
        `^the cleanup delete destroyed what was not its volume: volume /.*/volumes/${UUID} was removed; ${escaped(USE_CREATED_PATH)}$`,
      ),
    );
    expect(all['delete.others-untouched']?.reason).toMatch(
      new RegExp(
        `^deleting /.*/volumes/${UUID} destroyed what was not its volume: ` +
          `volume /.*/volumes/${UUID} was removed; volume /.*/volumes/${UUID} was removed$`,
      ),
    );
    expect(ignores['delete.uses-created-path']).toMatchObject({ status: 'fail', severity: 'recommended' });
    expect(ignores['delete.uses-created-path']?.reason).toMatch(
      new RegExp(
        `^delete with DHV_CREATED_PATH=/.*/volumes/${UUID} \\(and another DHV_VOLUMES_DIR\\) reported success ` +
          `but left that path in place: it does not use DHV_CREATED_PATH; ${escaped(USE_CREATED_PATH)}$`,
      ),
    );
  });
});
