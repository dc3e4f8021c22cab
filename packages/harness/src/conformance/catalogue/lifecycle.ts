import type { PluginRun } from '@dhv/sdk/client';
import { ENV } from '@dhv/sdk/plugin';
import { readCreatedPath } from '../inspect.js';
import type { CheckContext, CreateInput } from '../types.js';
import { fingerprintRun } from './fingerprint-run.js';

export interface LabelledRun {
  /** What the suite asked for, like "create (repeated)". */
  label: string;
  operation: string;
  run: PluginRun;
}

/** An operation name no plugin knows; the agent never sends one, but a plugin must refuse it. */
export const UNKNOWN_OPERATION = 'dhv-check-unknown-operation';
/** A parameter no plugin knows, to make create fail on purpose. */
export const UNKNOWN_PARAMETER = 'dhv-check-unknown-parameter';

/** A volume request that plugins should refuse: an unknown parameter. */
export function refusableRequest(ctx: CheckContext): CreateInput {
  return ctx.newVolume({ parameters: { ...(ctx.settings.parameters ?? {}), [UNKNOWN_PARAMETER]: 'x' } });
}

/**
 * Every kind of run a plugin goes through, once, as the agent runs it: the raw material
 * of the checks on output and on time. Computed once per suite run.
 */
export function lifecycleRuns(ctx: CheckContext): Promise<LabelledRun[]> {
  return ctx.shared('lifecycle', async (c) => {
    const runs: LabelledRun[] = [{ label: 'fingerprint', operation: 'fingerprint', run: await fingerprintRun(c) }];
    const request = c.newVolume();
    let createdPath = '';
    c.cleanup(() => c.delete(c.deleteRequest(request, createdPath)));
    const create = async (label: string, r: CreateInput) => {
      const run = await c.runAsAgent('create', r);
      runs.push({ label, operation: 'create', run });
      return run;
    };
    const created = readCreatedPath((await create('create', request)).stdout);
    if (created.ok) createdPath = created.value;
    await create('create (repeated)', request);
    const del = c.deleteRequest(request, createdPath);
    runs.push({ label: 'delete', operation: 'delete', run: await c.runAsAgent('delete', del) });
    runs.push({ label: 'delete (repeated)', operation: 'delete', run: await c.runAsAgent('delete', del) });
    const never = c.newVolume();
    runs.push({
      label: 'delete (never created)',
      operation: 'delete',
      run: await c.runAsAgent('delete', c.deleteRequest(never, '')),
    });
    runs.push({
      label: 'unknown operation',
      operation: UNKNOWN_OPERATION,
      run: await c.runRaw([UNKNOWN_OPERATION], { [ENV.operation]: UNKNOWN_OPERATION }),
    });
    const refusable = refusableRequest(c);
    let refusedPath = '';
    c.cleanup(() => c.delete(c.deleteRequest(refusable, refusedPath)));
    const refused = readCreatedPath(
      (await create(`create (unknown parameter ${UNKNOWN_PARAMETER})`, refusable)).stdout,
    );
    if (refused.ok) refusedPath = refused.value;
    return runs;
  });
}
