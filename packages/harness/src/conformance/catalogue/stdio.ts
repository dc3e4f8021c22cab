import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { buildEnvironment } from '@dhv/sdk/client';
import { AGENT_TIMEOUT_MS } from '@dhv/sdk/plugin';
import { readCreatedPath } from '../inspect.js';
import { runWithPipes, type PipeRun } from '../pipe-run.js';
import type { Check, CheckContext } from '../types.js';

/** How long a plugin's pipes may stay open after it exits; a helper it left running holds them far longer. */
const GRACE_MS = 1000;

function describeHolders(label: string, run: PipeRun): string[] {
  return run.holders.map((h) => `${label}: process ${h.pid} (${h.command}) still held its ${h.holds}`);
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
    needs: ['discovery.fingerprint-succeeds'],
    async run(ctx: CheckContext) {
      const request = ctx.newVolume();
      let createdPath = '';
      ctx.cleanup(() => ctx.delete(ctx.deleteRequest(request, createdPath)));
      const runs: Array<[string, PipeRun]> = [];
      let n = 0;
      const run = async <Op extends 'fingerprint' | 'create' | 'delete'>(
        operation: Op,
        input: Parameters<typeof buildEnvironment<Op>>[1],
      ) => {
        const dir = join(ctx.sandbox, `pipes-${++n}`);
        await mkdir(dir);
        let result: PipeRun;
        try {
          result = await runWithPipes(ctx.plugin, [operation], {
            env: buildEnvironment(operation, input, ctx.plugin),
            cwd: ctx.workDir,
            timeoutMs: AGENT_TIMEOUT_MS[operation],
            graceMs: GRACE_MS,
            dir,
          });
        } catch (err) {
          ctx.skip(`could not give the plugin pipes (mkfifo in ${dir}): ${(err as Error).message}`);
        }
        runs.push([operation, result]);
        return result;
      };
      await run('fingerprint', {});
      const created = readCreatedPath((await run('create', request)).stdout);
      if (created.ok) createdPath = created.value;
      await run('delete', ctx.deleteRequest(request, createdPath));
      const held = runs.flatMap(([label, r]) => describeHolders(label, r));
      if (held.length > 0)
        ctx.fail(`${held.join('; ')}; start helpers with their output redirected (>/dev/null 2>&1), or wait for them`);
      for (const [label, r] of runs) {
        if (r.spawnError || r.timedOut || r.exitCode !== 0)
          ctx.note(
            `${label} did not succeed on pipes (${r.spawnError ?? (r.timedOut ? 'timed out' : `exit status ${r.exitCode ?? r.signal}`)})`,
          );
      }
    },
  },
];
