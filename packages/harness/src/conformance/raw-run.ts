import { outputText, type PluginRun } from '@dhv/sdk/client';

/** Exit 0, started, not killed. */
export function succeeded(run: PluginRun): boolean {
  return run.spawnError === undefined && !run.timedOut && run.exitCode === 0;
}

/** How a run ended, in the agent's words. */
export function describeRun(run: PluginRun): string {
  if (run.spawnError)
    return `could not start: ${run.spawnError.message}${run.spawnProblem ? `: ${run.spawnProblem}` : ''}`;
  if (run.timedOut) return `timed out after ${Math.round(run.durationMs)} ms and was killed`;
  const how = run.signal ? `signal: ${run.signal}` : `exit status ${run.exitCode}`;
  const said = outputText(run.stdout).trim() || outputText(run.stderr).trim();
  return said ? `${how}: ${clip(said)}` : how;
}

/**
 * What a plugin said, on one line, short enough for a report: whole lines as long as they
 * fit in `max`, so no message is cut mid-phrase; a single line longer than that (a blob, not
 * a message) is cut at a word, and the cut says how much is left out.
 */
export function clip(text: string, max = 400): string {
  const lines = text
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
  const kept: string[] = [];
  let length = 0;
  for (const line of lines) {
    if (kept.length > 0 && length + line.length + 1 > max) break;
    kept.push(line);
    length += line.length + 1;
  }
  const rest = lines.length - kept.length;
  let one = kept.join(' ');
  if (one.length > max) {
    const cut = one.lastIndexOf(' ', max);
    const shown = one.slice(0, cut > max / 2 ? cut : max);
    one = `${shown} … (${one.length - shown.length} more characters)`;
  }
  return rest > 0 ? `${one} … (${rest} more ${rest === 1 ? 'line' : 'lines'})` : one;
}

/**
 * The last lines a plugin wrote to stderr, on one line (`a | b | c`), or '' when it wrote
 * none: what it said just before it failed, which Nomad's own message leaves out.
 */
export function lastLines(text: string, count = 3, max = 400): string {
  const lines = text
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .slice(-count);
  const one = lines.join(' | ');
  return one.length > max ? `… ${one.slice(one.length - max)}` : one;
}
