/**
 * The recorder `dhv record` puts at a plugin's path: a file of plain JavaScript that needs
 * nothing but the node it names (the agent passes no PATH, and the host may have only the
 * installed dhv), so it starts with `#!<node>` and holds its settings inline.
 *
 * `recorderMain` and its helpers are that file's whole program: their text is copied into
 * the file, so they may use nothing from outside their own bodies but each other and the
 * modules they are handed.
 */
export interface RecorderSettings {
  pluginId: string;
  /** The plugin's own path, which the agent ran: the plugin gets it as argv[0]. */
  pluginPath: string;
  /** Where the original plugin is kept while the recorder stands in for it. */
  original: string;
  log: string;
  /** setpriv(1) with --pdeathsig, when the host has it: the plugin dies with the recorder. */
  setpriv: string | null;
}

/** What identifies a recorder file (`dhv record --remove` refuses any other file there). */
export const RECORDER_MARK = 'dhv record: this file stands in for a host volume plugin';

interface RecorderModules {
  childProcess: typeof import('node:child_process');
  fs: typeof import('node:fs');
  os: typeof import('node:os');
}

/** What the recorder keeps of one call while it runs, for its log line. */
interface Call {
  argv: string[];
  env: Record<string, string>;
  start: string;
  started: bigint;
  stdout: Buffer[];
  stderr: Buffer[];
}

/** Runs the plugin as the agent asked, passes its output and signals through, logs the call and exits as the plugin did. */
export function recorderMain(settings: RecorderSettings, modules: RecorderModules): void {
  const { childProcess, fs, os } = modules;
  // The signals passed on to the plugin, as an agent's would reach it.
  const forwarded: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2', 'SIGALRM'];
  const call: Call = {
    argv: process.argv.slice(2),
    env: { ...process.env } as Record<string, string>,
    start: new Date().toISOString(),
    started: process.hrtime.bigint(),
    stdout: [],
    stderr: [],
  };
  const child = spawnWithSignals(childProcess, settings, call, forwarded);
  child.stdout!.on('data', (chunk: Buffer) => {
    call.stdout.push(chunk);
    writeAll(fs, 1, chunk);
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    call.stderr.push(chunk);
    writeAll(fs, 2, chunk);
  });
  let failed = false;
  child.on('error', (err) => {
    failed = true;
    const message = Buffer.from(`dhv record: cannot run ${settings.original}: ${err.message}\n`);
    call.stderr.push(message);
    writeAll(fs, 2, message);
    logCall(fs, settings, call, 127, null);
    process.exit(127);
  });
  child.on('close', (exit, signal) => {
    if (failed) return;
    logCall(fs, settings, call, exit, signal);
    exitAsPlugin(os, exit, signal, forwarded);
  });
}

/** Starts the plugin (under setpriv when there is one), listening for signals first: one sent once the plugin runs (a loaded machine can run it before this process takes its next step) must reach it, not kill the recorder. */
function spawnWithSignals(
  childProcess: RecorderModules['childProcess'],
  settings: RecorderSettings,
  call: Call,
  forwarded: readonly NodeJS.Signals[],
) {
  const [file, args] = settings.setpriv
    ? [settings.setpriv, ['--pdeathsig', 'KILL', '--', settings.original, ...call.argv]]
    : [settings.original, call.argv];
  const plugin: { child?: ReturnType<typeof childProcess.spawn> } = {};
  const early: NodeJS.Signals[] = [];
  const forward = (name: NodeJS.Signals) => {
    try {
      plugin.child!.kill(name);
    } catch {
      // already gone
    }
  };
  for (const name of forwarded) process.on(name, () => (plugin.child ? forward(name) : early.push(name)));
  const child = (plugin.child = childProcess.spawn(file, args, {
    env: call.env,
    argv0: settings.setpriv ? settings.setpriv : settings.pluginPath,
    stdio: ['inherit', 'pipe', 'pipe'],
  }));
  for (const name of early) forward(name);
  return child;
}

function writeAll(fs: RecorderModules['fs'], fd: number, chunk: Buffer): void {
  let at = 0;
  while (at < chunk.length) {
    try {
      at += fs.writeSync(fd, chunk, at);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return; // the reader is gone: keep draining the plugin
    }
  }
}

/** `{stdout: text}`, or `{stdout_base64: ...}` when the bytes are not UTF-8 that reads back the same. */
function outputField(stream: string, chunks: Buffer[]): Record<string, string> {
  const bytes = Buffer.concat(chunks);
  const decoded = bytes.toString('utf8');
  return Buffer.from(decoded, 'utf8').equals(bytes)
    ? { [stream]: decoded }
    : { [`${stream}_base64`]: bytes.toString('base64') };
}

function logCall(
  fs: RecorderModules['fs'],
  settings: RecorderSettings,
  call: Call,
  exit: number | null,
  signal: string | null,
): void {
  const line = {
    plugin: settings.pluginId,
    argv: call.argv,
    env: call.env,
    exit,
    ...(signal ? { signal } : {}),
    ...outputField('stdout', call.stdout),
    ...outputField('stderr', call.stderr),
    start: call.start,
    duration_ms: Math.round(Number(process.hrtime.bigint() - call.started) / 1e3) / 1e3,
  };
  try {
    fs.appendFileSync(settings.log, `${JSON.stringify(line)}\n`, { mode: 0o600 });
  } catch {
    // A log that cannot be written costs the record, never the call.
  }
}

function exitAsPlugin(
  os: RecorderModules['os'],
  exit: number | null,
  signal: NodeJS.Signals | null,
  forwarded: readonly NodeJS.Signals[],
): void {
  if (!signal) process.exit(exit ?? 1);
  // Die of the same signal, so the agent reads the same wait status.
  for (const name of forwarded) process.removeAllListeners(name);
  if (signal !== 'SIGKILL' && signal !== 'SIGSTOP' && !forwarded.includes(signal)) {
    const ignore = () => undefined;
    process.on(signal, ignore); // node ignores some (SIGPIPE); taking a listener off restores the default
    process.removeListener(signal, ignore);
  }
  // Its own PID: this file may use nothing but the modules it is handed.
  // eslint-disable-next-line no-restricted-properties
  process.kill(process.pid, signal);
  setTimeout(() => process.exit(128 + (os.constants.signals[signal] ?? 0)), 1000).unref();
}

/** Every function of the recorder program besides recorderMain, each copied into its file. */
const RECORDER_HELPERS = [spawnWithSignals, writeAll, outputField, logCall, exitAsPlugin];

/** The recorder file's text: `#!<node>`, its mark, and recorderMain called with its settings. */
export function recorderSource(node: string, settings: RecorderSettings): string {
  return [
    `#!${node}`,
    `// ${RECORDER_MARK} (${settings.pluginId}).`,
    `// The plugin itself is kept at ${settings.original}; \`dhv record --remove ${settings.pluginPath}\` puts it back.`,
    `'use strict';`,
    ...RECORDER_HELPERS.map(String),
    `(${recorderMain.toString()})(${JSON.stringify(settings)}, {`,
    `  childProcess: require('node:child_process'),`,
    `  fs: require('node:fs'),`,
    `  os: require('node:os'),`,
    `});`,
    '',
  ].join('\n');
}
