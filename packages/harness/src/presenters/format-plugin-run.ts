import type { PluginRunOnce } from '../agent/run-plugin-once.js';
import { keyValues } from './columns.js';

type Succeeded = PluginRunOnce & { ok: true };

/** `dhv plugin run --json`: the run's details, and what it decoded to as `result`. */
export function pluginRunJson(o: Succeeded) {
  return {
    pluginId: o.pluginId,
    executable: o.executable,
    builtin: o.builtin,
    operation: o.operation,
    environment: o.environment,
    durationMs: o.durationMs,
    stdout: o.stdout,
    stderr: o.stderr,
    outputHeldOpen: o.outputHeldOpen,
    outputHolders: o.outputHolders,
    warnings: o.warnings,
    result: { ...o.value } as Record<string, unknown>,
  };
}

/** `dhv plugin run`: what ran, the environment it got, the decoded result, and its output. */
export function pluginRunText(run: Succeeded): string {
  const o = pluginRunJson(run);
  const result = Object.entries(o.result).map(([k, v]) => [k, String(v)] as const);
  const parts = [
    'exitCode' in o.result
      ? `==> ${o.pluginId} ${o.operation} (not a protocol operation) ran in ${Math.round(o.durationMs)} ms (${o.executable})`
      : `==> ${o.pluginId} ${o.operation} succeeded in ${Math.round(o.durationMs)} ms (${o.builtin ? 'built-in' : o.executable})`,
    `Environment\n${keyValues(Object.entries(o.environment), '  ')}`,
    `Result\n${result.length > 0 ? keyValues(result, '  ') : '  (no fields)'}`,
  ];
  if ('exitCode' in o.result && o.stdout.trim() !== '')
    parts.push(`stdout\n${o.stdout.trimEnd().replace(/^/gm, '  ')}`);
  if (o.stderr.trim() !== '') parts.push(`stderr\n${o.stderr.trimEnd().replace(/^/gm, '  ')}`);
  return parts.join('\n\n');
}
