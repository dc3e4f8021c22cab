import { AsyncLocalStorage } from 'node:async_hooks';
import { writeSync } from 'node:fs';

/**
 * While a handler runs, everything plugin code prints (console.*, process.stdout.write)
 * goes to the handler's log sink instead of stdout, so nothing can corrupt the one JSON
 * document the protocol allows there. Sinks are per async context, so concurrent
 * in-process invocations (tests) keep their output apart.
 *
 * Nothing here touches process.stdout or process.stderr unless plugin code does: node
 * builds those streams on first access, and for pipes that loads its networking stack,
 * a few milliseconds of every fingerprint's 1 s budget for nothing. For the same reason
 * a plugin process, which runs one operation, keeps its one sink in a variable: async
 * context tracking (and node:console) is loaded only for in-process callers that may run
 * several invocations at once.
 */
export type Sink = (text: string) => void;

let soleSink: Sink | undefined;
let sinks: AsyncLocalStorage<Sink> | undefined;
const currentSink = (): Sink | undefined => soleSink ?? sinks?.getStore();
const CONSOLE_METHODS = [
  'log',
  'info',
  'debug',
  'warn',
  'error',
  'trace',
  'dir',
  'dirxml',
  'table',
  'group',
  'groupCollapsed',
  'groupEnd',
  'count',
  'countReset',
  'time',
  'timeEnd',
  'timeLog',
  'assert',
] as const;

let active = 0;
let restore: (() => void) | undefined;

/** Writes all of `text` to a file descriptor, synchronously, whatever plugin code has patched. */
function writeAll(fd: number, text: string): void {
  let buffer = Buffer.from(text);
  while (buffer.length > 0) {
    try {
      buffer = buffer.subarray(writeSync(fd, buffer));
    } catch (err) {
      // A non-blocking pipe that is full: wait a moment for the reader.
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}

/** The protocol's one write to stdout (file descriptor 1). Throws EPIPE when nobody reads. */
export function realStdoutWrite(text: string): void {
  writeAll(1, text);
}

/** A write to stderr (file descriptor 2); losing a log line is better than failing the operation. */
export function realStderrWrite(text: string): void {
  try {
    writeAll(2, text);
  } catch {
    // stderr closed: nobody is listening.
  }
}

interface Route {
  write(chunk: unknown): boolean;
}

/** Makes `process[name].write` go to the current sink, patching the stream only once something builds it. */
function redirectStream(name: 'stdout' | 'stderr', route: Route): () => void {
  const descriptor = Object.getOwnPropertyDescriptor(process, name);
  let patched: { stream: NodeJS.WriteStream; write: NodeJS.WriteStream['write'] } | undefined;
  const patch = (stream: NodeJS.WriteStream) => {
    if (patched) return stream;
    const write = stream.write;
    stream.write = ((chunk: unknown, ...rest: unknown[]) =>
      currentSink() ? route.write(chunk) : Reflect.apply(write, stream, [chunk, ...rest])) as never;
    patched = { stream, write };
    return stream;
  };
  let restoreGetter: (() => void) | undefined;
  if (descriptor?.get && !streamMayExist()) {
    const get = descriptor.get;
    Object.defineProperty(process, name, { ...descriptor, get: () => patch(get.call(process)) });
    restoreGetter = () => Object.defineProperty(process, name, descriptor);
  } else if (descriptor) {
    // Plugin code may hold the stream already (`const out = process.stdout`): patch it now.
    patch((descriptor.get ? descriptor.get.call(process) : descriptor.value) as NodeJS.WriteStream);
  }
  return () => {
    restoreGetter?.();
    if (patched) patched.stream.write = patched.write;
  };
}

/**
 * Whether node may have built process.stdout or process.stderr already. Building one
 * loads the module behind it (net for a pipe, tty for a terminal, a sync write stream
 * for a file), so when none of those is loaded, neither stream exists yet.
 */
function streamMayExist(): boolean {
  const loaded = (process as { moduleLoadList?: unknown }).moduleLoadList;
  if (!Array.isArray(loaded)) return true;
  return loaded.some(
    (m) => m === 'NativeModule net' || m === 'NativeModule tty' || m === 'NativeModule internal/fs/sync_write_stream',
  );
}

function install(): () => void {
  const noop = () => undefined;
  // Console needs only write() and listener bookkeeping from a stream.
  const route = (fallback: (text: string) => void): Route & Record<string, unknown> => ({
    on: noop,
    once: noop,
    off: noop,
    removeListener: noop,
    listenerCount: () => 0,
    write(chunk: unknown): boolean {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString();
      const sink = currentSink();
      if (sink) sink(text);
      else fallback(text);
      return true;
    },
  });
  const toStdout = route(realStdoutWrite);
  const toStderr = route(realStderrWrite);
  let redirected: Console | undefined;
  const target = console as unknown as Record<string, (...args: unknown[]) => void>;
  const originals = new Map<string, (...args: unknown[]) => void>();
  for (const method of CONSOLE_METHODS) {
    const original = target[method]!;
    originals.set(method, original);
    target[method] = (...args: unknown[]) => {
      if (!currentSink()) return original.apply(console, args);
      // The global console carries the Console class, so node:console need not be loaded.
      redirected ??= new console.Console({ stdout: toStdout as never, stderr: toStderr as never });
      return (redirected as unknown as Record<string, (...a: unknown[]) => void>)[method]!.apply(redirected, args);
    };
  }
  const restoreStdout = redirectStream('stdout', toStdout);
  const restoreStderr = redirectStream('stderr', toStderr);
  return () => {
    for (const [method, fn] of originals) target[method] = fn;
    restoreStdout();
    restoreStderr();
  };
}

/**
 * Runs `fn` with everything plugin code prints sent to `sink`. `sole` says no other
 * invocation runs in this process, now or later (a plugin's main()).
 */
export async function withOutputTo<T>(sink: Sink, fn: () => Promise<T>, sole = false): Promise<T> {
  if (active++ === 0) restore = install();
  try {
    if (sole && active === 1) {
      soleSink = sink;
      return await fn();
    }
    sinks ??= new AsyncLocalStorage<Sink>();
    return await sinks.run(sink, fn);
  } finally {
    if (soleSink === sink) soleSink = undefined;
    if (--active === 0) {
      restore?.();
      restore = undefined;
    }
  }
}
