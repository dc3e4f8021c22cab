import { join } from 'node:path';
import { buildEnvironment, decodeErrorOutput } from '@dhv/sdk/client';
import { AGENT_TIMEOUT_MS, FAIL_AT_VARIABLE, INJECTED_FAILURE } from '@dhv/sdk/plugin';
import { afterFailedCreate } from '../host-leftovers.js';
import { readCreatedPath } from '../inspect.js';
import { describeRun, succeeded } from '../raw-run.js';
import type { Check, CheckContext } from '../types.js';
import { added, listTree } from './volume-files.js';

/** How many steps (and tool calls) of one create are made to fail, one create each, before giving up. */
const MAX_INJECTED_FAULTS = 20;

type Kind = 'step' | 'tool';

/** What one create made to fail at the n-th step or tool call showed. */
type Attempt =
  | { end: 'succeeded' }
  | { end: 'injected'; at: string; left: string[] }
  | { end: 'failed otherwise'; run: string; left: string[] };

async function createFailingAt(ctx: CheckContext, kind: Kind, n: number): Promise<Attempt> {
  const request = ctx.newVolume();
  let createdPath = '';
  ctx.cleanup(() => ctx.delete(ctx.deleteRequest(request, createdPath)));
  const before = await listTree(ctx.sandbox);
  const env = { ...buildEnvironment('create', request, ctx.plugin), [FAIL_AT_VARIABLE]: `${kind}:${n}` };
  const run = await ctx.runRaw(['create'], env, { timeoutMs: AGENT_TIMEOUT_MS.create });
  if (succeeded(run)) {
    const path = readCreatedPath(run.stdout);
    if (path.ok) createdPath = path.value;
    return { end: 'succeeded' };
  }
  const volumesDir = request.volumesDir ?? ctx.volumesDir;
  const held = await afterFailedCreate(ctx.sandboxScope, {
    volumeId: request.volumeId,
    volumeName: request.volumeName ?? '',
    volumesDir,
    path: join(volumesDir, request.volumeId),
  });
  const left = [
    ...held.filter((l) => l.kind !== 'folder').map((l) => l.what),
    ...added(before, await listTree(ctx.sandbox)).slice(0, 5),
  ];
  // The SDK's message, `injected failure at step 2 (attach)`, even when the plugin wrapped it.
  const message = decodeErrorOutput(run.stdout, 'create') ?? '';
  const at = new RegExp(`${INJECTED_FAILURE} (${kind} ${n} \\(.*?\\))`).exec(message)?.[1];
  return at === undefined ? { end: 'failed otherwise', run: describeRun(run), left } : { end: 'injected', at, left };
}

export const injectedFaultChecks: Check[] = [
  {
    id: 'errors.injected-failures-leave-nothing',
    area: 'errors',
    title: `A create made to fail at each of its steps and tool calls in turn (${FAIL_AT_VARIABLE}, read by SDK plugins) leaves nothing behind.`,
    protocolRef: 'PROTOCOL.md § create',
    severity: 'recommended',
    gradeReason:
      'the agent never calls delete after a failed create: what is left is a leak on the node, but no volume exists, so no data is lost and nothing under Nomad breaks',
    needs: ['environment.dhv-only'],
    asks: `creates at the capacities given with ${FAIL_AT_VARIABLE}=step:1, step:2, … until one succeeds, then tool:1, tool:2, … likewise (at most ${MAX_INJECTED_FAULTS} of each); each volume is deleted afterwards`,
    async run(ctx: CheckContext) {
      const leaks: string[] = [];
      const injected: Record<Kind, number> = { step: 0, tool: 0 };
      for (const kind of ['step', 'tool'] as const) {
        for (let n = 1; ; n++) {
          if (n > MAX_INJECTED_FAULTS) {
            ctx.note(`create still failed at ${kind} ${MAX_INJECTED_FAULTS}; later ${kind}s were not tried`);
            break;
          }
          const attempt = await createFailingAt(ctx, kind, n);
          if (attempt.end === 'succeeded') break;
          if (attempt.end === 'injected') {
            injected[kind]++;
            if (attempt.left.length > 0)
              leaks.push(
                `made to fail at ${attempt.at} (${FAIL_AT_VARIABLE}=${kind}:${n}), the create left behind: ${attempt.left.join(', ')}`,
              );
            continue;
          }
          // A failure that does not name the fault asked for: the create fails on its own here.
          if (attempt.left.length > 0)
            leaks.push(
              `with ${FAIL_AT_VARIABLE}=${kind}:${n} the create failed (${attempt.run}) and left: ${attempt.left.join(', ')}`,
            );
          if (kind === 'step' && n === 1 && injected.step === 0)
            ctx.skip(`create failed before any fault was injected (${attempt.run}); the other checks say why`);
          ctx.note(
            `with ${FAIL_AT_VARIABLE}=${kind}:${n} the create failed without naming the injected fault (${attempt.run}); later ${kind}s were not tried`,
          );
          break;
        }
      }
      if (leaks.length > 0)
        ctx.fail(
          `${leaks.join('; ')}. The agent never calls delete after a failed create: give each step that makes something its undo (ctx.step's third argument, or ctx.undo)`,
        );
      if (injected.step + injected.tool === 0)
        ctx.skip(
          `cannot judge: create succeeded with ${FAIL_AT_VARIABLE}=step:1 and with tool:1, so no fault could be injected; only a plugin built on the dhv SDK reads the variable, and only at its ctx.step and runTool calls`,
        );
      ctx.note(
        `made create fail at each of its ${injected.step} step(s) and ${injected.tool} tool call(s) in turn; none left anything`,
      );
    },
  },
];
