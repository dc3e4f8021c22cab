import { outputText, type PluginRun } from '@dhv/sdk/client';

/** Exit 0, started, not killed. */
export function succeeded(run: PluginRun): boolean {
  return run.spawnError === undefined && !run.timedOut && run.exitCode === 0;
}

/** How a run ended, in the agent's words. */
export function describeRun(run: PluginRun): string {
  if (run.spawnError) return `could not start: ${run.spawnError.message}`;
  if (run.timedOut) return `timed out after ${Math.round(run.durationMs)} ms and was killed`;
  const how = run.signal ? `signal: ${run.signal}` : `exit status ${run.exitCode}`;
  const said = outputText(run.stdout).trim() || outputText(run.stderr).trim();
  return said ? `${how}: ${clip(said)}` : how;
}

export function clip(text: string, max = 160): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max)}…` : one;
}
