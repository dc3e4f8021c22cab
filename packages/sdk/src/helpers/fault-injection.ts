import type { AsyncLocalStorage } from 'node:async_hooks';
import { PluginFailure } from './errors.js';

/**
 * Where `invoke({ failAt })` makes a handler fail: the n-th `ctx.step` (counted from 1)
 * or the step of that name, or the n-th `runTool` call or the first call of that tool.
 * An agent never asks for it: a plugin process only reads FAIL_AT_VARIABLE, which no agent sends.
 */
export type FaultPoint = { step: number | string } | { tool: number | string };

/**
 * The variable that makes a plugin process fail as `invoke({ failAt })` does: `step:3`,
 * `step:<name>`, `tool:2`, `tool:<name>`. `dhv check` sets it to make a create fail part
 * way for real. Outside the DHV_ prefix: Nomad's agent sends only DHV_* variables.
 */
export const FAIL_AT_VARIABLE = 'DHVSDK_FAIL_AT';

/** The fault point a FAIL_AT_VARIABLE value names; throws saying the accepted forms when it names none. */
export function parseFaultPoint(text: string): FaultPoint {
  const match = /^(step|tool):(.+)$/.exec(text);
  if (match) {
    const [, kind, at] = match as unknown as [string, 'step' | 'tool', string];
    const point = /^[0-9]+$/.test(at) ? Number(at) : at;
    if (point !== 0) return kind === 'step' ? { step: point } : { tool: point };
  }
  throw new Error(
    `${FAIL_AT_VARIABLE}=${JSON.stringify(text)} names no fault point; use step:<n>, step:<name>, tool:<n> or tool:<name> (n counts from 1)`,
  );
}

/** How an injected fault's message starts: `injected failure at step 2 (attach)`. */
export const INJECTED_FAILURE = 'injected failure at';

/** The error an injected fault throws; its code is EINJECTED. */
export class InjectedFault extends PluginFailure {
  constructor(where: string) {
    super('EINJECTED', `${INJECTED_FAILURE} ${where}`);
    this.name = 'InjectedFault';
  }
}

/** Counts the steps and tool calls of one handler run and fails the one `at` names. */
export class FaultPlan {
  private readonly counts = { step: 0, tool: 0 };

  constructor(private readonly at: FaultPoint | undefined) {}

  /** Throws an InjectedFault when this step or tool call is the one to fail. */
  check(kind: 'step' | 'tool', name: string): void {
    const n = ++this.counts[kind];
    if (this.at === undefined || !(kind in this.at)) return;
    const target = (this.at as Record<string, number | string>)[kind];
    if (target === n || target === name) throw new InjectedFault(`${kind} ${n} (${name})`);
  }
}

// Made only when a test asks for a fault: a plugin process never loads async_hooks.
let current: AsyncLocalStorage<FaultPlan> | undefined;

/** Runs `fn` with `plan` deciding which of its tool calls fail. */
export async function withFaultPlan<T>(plan: FaultPlan, fn: () => Promise<T>): Promise<T> {
  current ??= new (await import('node:async_hooks')).AsyncLocalStorage<FaultPlan>();
  return current.run(plan, fn);
}

/** Called by runTool before it starts a tool: throws when the running test asked this call to fail. */
export function checkToolFault(name: string): void {
  current?.getStore()?.check('tool', name);
}
