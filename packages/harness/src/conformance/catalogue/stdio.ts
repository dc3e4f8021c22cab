import { fingerprintRequest, type PluginRun, type RequestInput } from '@dhv/sdk/client';
import { readCreatedPath } from '../inspect.js';
import type { Check, CheckContext } from '../types.js';

/**
 * How long a plugin's pipes may stay open after it exits; a helper it left running holds
 * them far longer. Seconds, not less: a correct plugin's last helper can take that long to
 * exit on a loaded machine.
 */
const GRACE_MS = 5_000;

function describeHolders(label: string, run: PluginRun): string[] {
  return run.outputHolders.map((h) => `${label}: process ${h.pid} (${h.command}) still held its ${h.holds}`);
}

export const stdioChecks: Check[] = [
  {
    id: 'errors.stdio-released',
    area: 'errors',
    title:
      'With stdout and stderr on pipes, as the agent gives them, nothing the plugin started still holds either once it exits.',
    protocolRef: 'PROTOCOL.md § Running an operation (stdout and stderr are pipes; the agent reads until they close)',
    severity: 'required',
    gradeReason:
      'a real agent reads stdout and stderr until every writer closes them, not until the plugin exits: a helper left holding one keeps the agent waiting for as long as it lives, past every deadline',
    asks: '1 volume at the capacities given',
    needs: ['discovery.fingerprint-succeeds'],
    async run(ctx: CheckContext) {
      const request = ctx.newVolume();
      let createdPath = '';
      ctx.cleanup(() => ctx.delete(ctx.deleteRequest(request, createdPath)));
      const runs: Array<[string, PluginRun]> = [];
      const run = async <Op extends 'fingerprint' | 'create' | 'delete'>(operation: Op, input: RequestInput<Op>) => {
        const result = await ctx.runAsAgent(operation, input, { outputGraceMs: GRACE_MS });
        if (result.stdio !== 'pipe')
          ctx.skip("could not give the plugin pipes: @dhv/sdk's client could make none here and gave it sockets");
        runs.push([operation, result]);
        return result;
      };
      await run('fingerprint', fingerprintRequest());
      const created = readCreatedPath((await run('create', request)).stdout);
      if (created.ok) createdPath = created.value;
      await run('delete', ctx.deleteRequest(request, createdPath));
      const held = runs.flatMap(([label, r]) => describeHolders(label, r));
      if (held.length > 0)
        ctx.fail(`${held.join('; ')}; start helpers with their output redirected (>/dev/null 2>&1), or wait for them`);
      for (const [label, r] of runs) {
        if (r.spawnError || r.timedOut || r.exitCode !== 0)
          ctx.note(
            `${label} did not succeed on pipes (${r.spawnError?.message ?? (r.timedOut ? 'timed out' : `exit status ${r.exitCode ?? r.signal}`)})`,
          );
      }
    },
  },
];
