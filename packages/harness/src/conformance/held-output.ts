import type { OutputHolder, PluginRun } from '@dhv/sdk/client';
import { AGENT_TIMEOUT_MS } from '@dhv/sdk/plugin';
import { stdioChecks } from './catalogue/stdio.js';
import { describeCheck, type CheckResult } from './types.js';

/**
 * How long a plugin's stdout and stderr may stay open after it exits before whoever holds
 * them is killed. A correct plugin's last helpers close them within milliseconds at rest,
 * but seconds on a loaded machine (2 s failed correct plugins at load 25); a helper left
 * running holds them far longer, and the run stops at the first one, so a long grace
 * costs only a faulty plugin, once.
 */
export const HELD_OUTPUT_GRACE_MS = 10_000;

/**
 * A plugin run that exited while a process it started still held its stdout or stderr.
 * A real agent reads until every writer closes them, so it waits for that process as
 * long as it lives, past every deadline: each further operation of the run would wait
 * the same, so the first one found is reported and the run stops.
 */
export interface HeldOutputFault {
  /** The check whose plugin run it was. */
  checkId: string;
  operation: string;
  holders: OutputHolder[];
}

export function heldOutputFault(
  checkId: string,
  operation: string,
  run: Pick<PluginRun, 'outputHolders'>,
): HeldOutputFault {
  return { checkId, operation, holders: run.outputHolders };
}

/** The check that states the requirement a held output breaks. */
export const STDIO_RELEASED = 'errors.stdio-released';
const STDIO_CHECK = stdioChecks.find((c) => c.id === STDIO_RELEASED)!;

/** The required failure the fault is: errors.stdio-released, whichever check ran into it first. */
export function heldOutputFailure(fault: HeldOutputFault): CheckResult {
  return {
    ...describeCheck(STDIO_CHECK),
    status: 'fail',
    reason: `${describeFault(fault)}: a real agent waits for it as long as it lives, past the ${AGENT_TIMEOUT_MS.create / 1000}s deadline; start helpers with their output redirected (>/dev/null 2>&1), or wait for them`,
    notes: [],
    durationMs: 0,
  };
}

/** Why the run stopped, for the report's `stopped`. */
export function heldOutputStop(fault: HeldOutputFault, notRun: number): string {
  return `${describeFault(fault)} (errors.stdio-released): every further operation would wait for it, so ${notRun} ${notRun === 1 ? 'check was' : 'checks were'} not run`;
}

/** `the create of environment.dhv-only left process 4711 (/usr/bin/sleep) holding its stdout and stderr after it exited`. */
function describeFault({ checkId, operation, holders }: HeldOutputFault): string {
  const byPid = new Map<number, { command: string; holds: string[] }>();
  for (const h of holders) {
    const seen = byPid.get(h.pid) ?? { command: h.command, holds: [] };
    seen.holds.push(h.holds);
    byPid.set(h.pid, seen);
  }
  const who =
    byPid.size === 0
      ? 'a process'
      : [...byPid].map(([pid, h]) => `process ${pid} (${h.command}) holding its ${h.holds.join(' and ')}`).join(', ');
  return `the ${operation} of ${checkId} left ${who}${byPid.size === 0 ? ' holding its stdout or stderr' : ''} after it exited`;
}
