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
  const stdout = outputText(run.stdout).trim();
  const stderr = outputText(run.stderr);
  if (stdout) return `${how}: ${clip(stdout)}${stackTraceIn(stderr)}`;
  const stack = stackTraceIn(stderr);
  if (stack) return `${how}${stack}`;
  return stderr.trim() ? `${how}: ${clip(stderr)}` : how;
}

/** The last lines of a plugin's stderr (lastLines) when `message` does not already hold them; '' when it does or there are none. */
export function stderrBeyond(stderr: string, message: string): string {
  const said = lastLines(stderr);
  return message.includes(said) ? '' : said;
}

/** How many frames of a plugin's stack trace a report shows. */
const FRAMES_SHOWN = 4;

/**
 * The exception and the first frames of a stack trace a plugin wrote to stderr, on lines of
 * their own after a line break (the agent only logs it, and its words leave it out), with
 * the way to make a minified plugin's frames readable; '' when stderr holds none.
 */
export function stackTraceIn(stderr: string): string {
  const lines = stderr.split('\n');
  const isFrame = (line: string) => /^\s+at /.test(line);
  const first = lines.findIndex(isFrame);
  if (first < 1) return '';
  const frames = lines.slice(first).filter(isFrame);
  const shown = frames.slice(0, FRAMES_SHOWN).map((l) => `  ${l.trim()}`);
  if (frames.length > FRAMES_SHOWN) shown.push(`  … (${frames.length - FRAMES_SHOWN} more frames)`);
  // A column in the hundreds is a minified line, which a source map would turn into the source's.
  if (frames.some((l) => /:\d+:\d{3,}\)?$/.test(l.trim())))
    shown.push('(the plugin is minified: `dhv build --sourcemap` makes these frames name its source files and lines)');
  return `\nthe plugin's stack trace: ${lines[first - 1]!.trim()}\n${shown.join('\n')}`;
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
