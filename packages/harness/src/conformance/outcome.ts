import { PluginError } from '@dhv/sdk/client';
import { stackTraceIn, stderrBeyond } from './raw-run.js';
import type { Status } from './types.js';

/** Thrown by ctx.fail and ctx.skip to end a check; anything else thrown is a failure of the check. */
export class CheckOutcome extends Error {
  constructor(
    readonly status: Extract<Status, 'fail' | 'skip'>,
    readonly reason: string,
  ) {
    super(reason);
    this.name = 'CheckOutcome';
  }
}

/** The reason to show for an error a check did not expect, which is a failure of the plugin or of the check. */
export function describeUnexpected(err: unknown): string {
  if (err instanceof PluginError) return `${err.message}${pluginSaid(err)}`;
  if (err instanceof Error) return err.message;
  return String(err);
}

/** What a failed plugin wrote to stderr that Nomad's words leave out: its stack trace, else its last lines. */
function pluginSaid(err: PluginError): string {
  const stack = stackTraceIn(err.stderr);
  if (stack) return stack;
  const said = stderrBeyond(err.stderr, err.message);
  return said ? `\nthe plugin's stderr ended: ${said}` : '';
}
