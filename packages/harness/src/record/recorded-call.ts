import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { UsageError } from '../errors/dhv-error.js';

/**
 * One plugin call as `dhv record` writes it (one JSON line) and as the real-agent vectors
 * hold it (`steps[].plugin_calls[]`): the plugin ID, the argv after the executable, every
 * environment variable the plugin received in the order received, and its answer. Output
 * that is not valid UTF-8 is kept as `stdout_base64` / `stderr_base64` instead, so the
 * bytes survive; a plugin killed by a signal has `exit: null` and `signal`.
 */
const recordedCallSchema = z.object({
  plugin: z.string(),
  argv: z.array(z.string()),
  env: z.record(z.string(), z.string()),
  exit: z.number().int().nullable(),
  signal: z.string().nullable().optional(),
  stdout: z.string().optional(),
  stderr: z.string().optional(),
  stdout_base64: z.string().optional(),
  stderr_base64: z.string().optional(),
  /** When the call started (RFC 3339), and how long it ran, as the recorder saw it. */
  start: z.string().optional(),
  duration_ms: z.number().optional(),
});

export type RecordedCall = z.infer<typeof recordedCallSchema>;

/** A call read from a trace, with where it came from for the report. */
export interface TraceCall {
  call: RecordedCall;
  /** `line 12` of a JSONL trace, `step 3, call 2` of a scenario. */
  where: string;
}

/** The bytes a recorded call answered on stdout or stderr. */
export function recordedBytes(call: RecordedCall, stream: 'stdout' | 'stderr'): Buffer {
  const base64 = call[`${stream}_base64`];
  if (base64 !== undefined) return Buffer.from(base64, 'base64');
  return Buffer.from(call[stream] ?? '', 'utf8');
}

/**
 * The calls of a trace: the JSON lines `dhv record` appends, or a real-agent scenario
 * (`{"steps": [{"plugin_calls": [...]}]}`). A line that is not JSON (a recorder killed
 * mid-write, or one whose disk filled, leaves a line cut short) is skipped and reported;
 * a JSON line that is not a plugin call is an error naming its line.
 */
export async function readTrace(file: string): Promise<{ calls: TraceCall[]; skipped: string[] }> {
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot read the trace ${file}: ${err.message}`, 'TRACE_UNREADABLE', { file });
  });
  const whole = parseJson(text.trim());
  if (isScenario(whole)) return { calls: scenarioCalls(file, whole), skipped: [] };
  const calls: TraceCall[] = [];
  const skipped: string[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    const where = `line ${index + 1}`;
    const json = parseJson(line);
    if (json === undefined) return skipped.push(`${where}: not JSON (a line cut short?)`);
    const parsed = recordedCallSchema.safeParse(json);
    if (!parsed.success) throw badTrace(file, where, parsed.error);
    calls.push({ call: parsed.data, where });
  });
  return { calls, skipped };
}

function scenarioCalls(file: string, scenario: { steps: unknown[] }): TraceCall[] {
  const calls: TraceCall[] = [];
  scenario.steps.forEach((step, s) => {
    const list = (step as { plugin_calls?: unknown }).plugin_calls;
    if (!Array.isArray(list)) return;
    list.forEach((raw, c) => {
      const where = `step ${s + 1}, call ${c + 1}`;
      const parsed = recordedCallSchema.safeParse(raw);
      if (!parsed.success) throw badTrace(file, where, parsed.error);
      calls.push({ call: parsed.data, where });
    });
  });
  return calls;
}

function isScenario(value: unknown): value is { steps: unknown[] } {
  return typeof value === 'object' && value !== null && Array.isArray((value as { steps?: unknown }).steps);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function badTrace(file: string, where: string, error: z.ZodError): UsageError {
  const issue = error.issues[0];
  const detail = issue ? `${issue.path.join('.') || 'the line'}: ${issue.message}` : 'not a plugin call';
  return new UsageError(
    `${file}, ${where}: not a recorded plugin call (${detail})\n` +
      'A trace is the JSON lines `dhv record` writes, or a real-agent scenario file with steps[].plugin_calls.',
    'TRACE_INVALID',
    { file, where },
  );
}
