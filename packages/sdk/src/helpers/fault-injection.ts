import type { AsyncLocalStorage } from 'node:async_hooks';
import { PluginFailure } from './errors.js';

/**
 * Where `invoke({ failAt })` makes a handler fail: the n-th `ctx.step` (counted from 1)
 * or the step of that name, or the n-th `runTool` call or the first call of that tool.
 * For authors' in-process tests only; a plugin run by an agent has no way to ask for it.
 */
export type FaultPoint = { step: number | string } | { tool: number | string };

/** The error an injected fault throws; its code is EINJECTED. */
export class InjectedFault extends PluginFailure {
  constructor(where: string) {
    super('EINJECTED', `injected failure at ${where}`);
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
