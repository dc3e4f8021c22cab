import { AGENT_RESTORE_DEADLINE_MS, AGENT_TIMEOUT_MS } from '@dhv/sdk/plugin';
import { AGENT_DEADLINES } from '../agent-deadlines.js';
import type { Check, CheckContext } from '../types.js';
import { lifecycleRuns } from './lifecycle.js';

/** A create slower than the restores' shared deadline alone is never restored. Above WARN_ABOVE_MS a restore of many volumes on a booting host is at risk. */
const FAIL_ABOVE_MS = AGENT_RESTORE_DEADLINE_MS;
const WARN_ABOVE_MS = 10_000;

export const budgetChecks: Check[] = [
  {
    id: 'budgets.create-delete-time',
    area: 'budgets',
    title: `create and delete finish well inside the agent's ${AGENT_TIMEOUT_MS.create / 1000} s budget.`,
    protocolRef: 'PROTOCOL.md § create, § delete (timeout: 60 seconds)',
    severity: 'required',
    gradeReason: AGENT_DEADLINES,
    asks: 'the shared calls: 1 volume at the capacities given (created twice, deleted twice), a delete of a volume never created, an unknown operation, a create with an unknown parameter',
    needs: ['environment.dhv-only'],
    async run(ctx: CheckContext) {
      const timed = (await lifecycleRuns(ctx)).filter((r) => r.operation === 'create' || r.operation === 'delete');
      const slowest = timed.reduce((a, b) => (b.run.durationMs > a.run.durationMs ? b : a));
      const shown = `${slowest.label} took ${Math.round(slowest.run.durationMs)} ms`;
      ctx.note(`slowest: ${shown}`);
      if (slowest.run.timedOut || slowest.run.durationMs > FAIL_ABOVE_MS) {
        ctx.fail(
          `${shown}; a real agent's restore kills creates past ${FAIL_ABOVE_MS / 1000} s (and every call past ${AGENT_TIMEOUT_MS.create / 1000} s)`,
        );
      }
      if (slowest.run.durationMs > WARN_ABOVE_MS)
        ctx.warn(`${shown}; above ${WARN_ABOVE_MS / 1000} s a busy restore risks the deadline`);
    },
  },
];
