import { PluginError } from '@dhv/sdk/client';
import { DhvError } from '../errors/dhv-error.js';
import { EXIT_CODES, type ExitCode } from '../errors/exit-codes.js';
import { dhvDocument } from './dhv-document.js';

/** An error for a person: the message, then for a plugin failure its exit, stdout and stderr. */
export function describeError(err: unknown): string {
  if (err instanceof PluginError) {
    const lines = [err.message];
    const detail = (label: string, text: string) => {
      const trimmed = text.trimEnd();
      if (trimmed !== '')
        lines.push(
          `  ${label}:\n${trimmed
            .split('\n')
            .map((l) => `    ${l}`)
            .join('\n')}`,
        );
    };
    lines.push(`  code: ${err.code}`);
    if (err.executable) lines.push(`  executable: ${err.executable}`);
    // What the message already says (the plugin's {"error": ...}, a stderr line Nomad quotes) is said once.
    if (!saysAlready(err.message, err.stdout)) detail('stdout', err.stdout);
    if (!saysAlready(err.message, err.stderr)) detail('stderr', err.stderr);
    const hint = nextStep(err);
    if (hint) lines.push(`  ${hint}`);
    return lines.join('\n');
  }
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Whether `output` adds nothing to `message`: it is empty, quoted in it, or an {"error": ...} document whose error is. */
function saysAlready(message: string, output: string): boolean {
  const text = output.trim();
  if (text === '' || message.includes(text)) return true;
  try {
    const doc: unknown = JSON.parse(text);
    const error = (doc as { error?: unknown } | null)?.error;
    return typeof error === 'string' && Object.keys(doc as object).length === 1 && message.includes(error);
  } catch {
    return false;
  }
}

/** What to do next after a plugin's failure; none for a plugin that is there but cannot start (its diagnosis says the fix). */
function nextStep(err: PluginError): string | undefined {
  if (err.spawnProblem) return undefined;
  switch (err.code) {
    case 'PLUGIN_NOT_FOUND':
      return 'Put the plugin in the plugin directory (--plugin-dir), or check the plugin_id.';
    case 'PLUGIN_NOT_EXECUTABLE':
      return 'Make the plugin executable (chmod +x), with a #! line that works without PATH.';
    case 'PLUGIN_TIMED_OUT':
      return 'The agent kills a plugin at its deadline; make the operation faster.';
    case 'PLUGIN_BAD_OUTPUT':
      return 'A plugin must print exactly one JSON document to stdout (dhv check tests this).';
    case 'PLUGIN_ABORTED':
      return 'The agent shut down while the plugin ran; run the command again.';
    default:
      return "The plugin's message says why; `dhv check <plugin>` runs the conformance suite against it.";
  }
}

/**
 * An error for a program, headed as dhv's own documents are (`apiVersion`, `kind: "Error"`,
 * whatever command failed): its code, every detail it carries, and under `warnings` what
 * was said before it (a misspelt key explains a failure as much as the error does).
 */
export function errorJson(
  err: unknown,
  warnings: readonly string[] = [],
): { apiVersion: string; kind: string; error: Record<string, unknown> } {
  const { error } = errorDocument(err);
  const own = Array.isArray(error.warnings) ? (error.warnings as string[]) : [];
  const all = [...new Set([...own, ...warnings])];
  return dhvDocument('Error', { error: all.length === 0 ? error : { ...error, warnings: all } });
}

function errorDocument(err: unknown): { error: Record<string, unknown> } {
  if (err instanceof PluginError) {
    // The text's closing line, said to a program too: after the hints the plugin's error carries.
    const hint = nextStep(err);
    return { error: { ...err.toJSON(), ...(hint ? { hints: [...err.hints, hint] } : {}) } };
  }
  if (err instanceof DhvError) return { error: err.toJSON() };
  if (isUsageMistake(err)) return { error: { code: 'USAGE', message: err.message } };
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { error: { code: typeof code === 'string' ? code : 'ERROR', message: err.message } };
  }
  return { error: { code: 'ERROR', message: String(err) } };
}

/** The exit status a command ends with when `err` stops it (the table is EXIT_CODES). */
export function errorExitCode(err: unknown): ExitCode {
  if (err instanceof DhvError) return err.exitCode;
  if (isUsageMistake(err)) return EXIT_CODES.usage;
  return EXIT_CODES.failed;
}

/** oclif's parse errors (unknown flag, missing argument, bad option) carry `oclif.exit` and a `parse` field. */
function isUsageMistake(err: unknown): err is Error {
  return err instanceof Error && 'parse' in err && typeof (err as { oclif?: unknown }).oclif === 'object';
}
