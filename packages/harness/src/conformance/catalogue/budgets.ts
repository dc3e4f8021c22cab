import { AGENT_TIMEOUT_MS } from '@dhv/sdk/plugin';
import type { Check, CheckContext } from '../types.js';
import { lifecycleRuns } from './lifecycle.js';

/**
 * The agent allows 60 s, but a restore runs every volume at once on a host that is
 * still booting: a plugin that needs half its budget on a quiet machine will miss it.
 */
const FAIL_ABOVE_MS = AGENT_TIMEOUT_MS.create / 2;
const WARN_ABOVE_MS = 10_000;

export const budgetChecks: Check[] = [
  {
    id: 'budgets.create-delete-time',
    area: 'budgets',
    title: `create and delete finish well inside the agent's ${AGENT_TIMEOUT_MS.create / 1000} s budget.`,
    protocolRef: 'PROTOCOL.md § create, § delete (timeout: 60 seconds)',
    severity: 'required',
    needs: ['environment.dhv-only'],
    async run(ctx: CheckContext) {
      const timed = (await lifecycleRuns(ctx)).filter((r) => r.operation === 'create' || r.operation === 'delete');
      const slowest = timed.reduce((a, b) => (b.run.durationMs > a.run.durationMs ? b : a));
      const shown = `${slowest.label} took ${Math.round(slowest.run.durationMs)} ms`;
      ctx.note(`slowest: ${shown}`);
      if (slowest.run.timedOut || slowest.run.durationMs > FAIL_ABOVE_MS) {
        ctx.fail(`${shown}; keep create and delete under ${FAIL_ABOVE_MS / 1000} s (the agent kills them at ${AGENT_TIMEOUT_MS.create / 1000} s)`);
      }
      if (slowest.run.durationMs > WARN_ABOVE_MS) ctx.warn(`${shown}; above ${WARN_ABOVE_MS / 1000} s a busy restore risks the deadline`);
    },
  },
];
