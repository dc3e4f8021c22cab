import { AsyncLocalStorage } from 'node:async_hooks';
import { Console } from 'node:console';

/**
 * While a handler runs, everything plugin code prints (console.*, process.stdout.write)
 * goes to the handler's log sink instead of stdout, so nothing can corrupt the one JSON
 * document the protocol allows there. Sinks are per async context, so concurrent
 * in-process invocations (tests) keep their output apart.
 */
export type Sink = (text: string) => void;

const sinks = new AsyncLocalStorage<Sink>();
const CONSOLE_METHODS = ['log', 'info', 'debug', 'warn', 'error', 'trace', 'dir', 'dirxml', 'table', 'group', 'groupCollapsed', 'groupEnd', 'count', 'countReset', 'time', 'timeEnd', 'timeLog', 'assert'] as const;

let active = 0;
let restore: (() => void) | undefined;

/** The writes that really reach file descriptors 1 and 2, whatever plugin code has patched. */
export const realStdoutWrite = process.stdout.write.bind(process.stdout) as (text: string, cb?: (err?: Error | null) => void) => boolean;
export const realStderrWrite = process.stderr.write.bind(process.stderr) as (text: string) => boolean;

function install(): () => void {
  const originals = new Map<string, unknown>();
  const noop = () => undefined;
  // Console needs only write() and listener bookkeeping from a stream.
  const route = (fallback: (text: string) => boolean) => ({
    on: noop,
    once: noop,
    off: noop,
    removeListener: noop,
    listenerCount: () => 0,
    write(chunk: unknown): boolean {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString();
      const sink = sinks.getStore();
      if (sink) sink(text);
      else fallback(text);
      return true;
    },
  });
  const toStdout = route(realStdoutWrite);
  const toStderr = route(realStderrWrite);
  const redirected = new Console({ stdout: toStdout as never, stderr: toStderr as never });
  const target = console as unknown as Record<string, unknown>;
  for (const method of CONSOLE_METHODS) {
    originals.set(method, target[method]);
    const replacement = (redirected as unknown as Record<string, (...args: unknown[]) => void>)[method]!;
    const original = target[method] as (...args: unknown[]) => void;
    target[method] = (...args: unknown[]) => (sinks.getStore() ? replacement.apply(redirected, args) : original.apply(console, args));
  }
  const stdoutWrite = process.stdout.write;
  const stderrWrite = process.stderr.write;
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) =>
    sinks.getStore() ? toStdout.write(chunk) : (stdoutWrite as Function).call(process.stdout, chunk, ...rest)) as never;
  process.stderr.write = ((chunk: unknown, ...rest: unknown[]) =>
    sinks.getStore() ? toStderr.write(chunk) : (stderrWrite as Function).call(process.stderr, chunk, ...rest)) as never;
  return () => {
    for (const [method, fn] of originals) target[method] = fn;
    process.stdout.write = stdoutWrite;
    process.stderr.write = stderrWrite;
  };
}

export async function withOutputTo<T>(sink: Sink, fn: () => Promise<T>): Promise<T> {
  if (active++ === 0) restore = install();
  try {
    return await sinks.run(sink, fn);
  } finally {
    if (--active === 0) {
      restore?.();
      restore = undefined;
    }
  }
}
