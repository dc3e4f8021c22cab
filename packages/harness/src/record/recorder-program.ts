/**
 * The recorder `dhv record` puts at a plugin's path: a file of plain JavaScript that needs
 * nothing but the node it names (the agent passes no PATH, and the host may have only the
 * installed dhv), so it starts with `#!<node>` and holds its settings inline.
 *
 * `recorderMain` is that file's whole program: its text is copied into the file, so it
 * may use nothing from outside its own body but the modules it is handed.
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

export function recorderMain(settings: RecorderSettings, modules: RecorderModules): void {
  const { childProcess, fs, os } = modules;
  const argv = process.argv.slice(2);
  const env = { ...process.env } as Record<string, string>;
  const start = new Date().toISOString();
  const started = process.hrtime.bigint();
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  const forwarded = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2', 'SIGALRM'] as const;

  const writeAll = (fd: number, chunk: Buffer) => {
    let at = 0;
    while (at < chunk.length) {
      try {
        at += fs.writeSync(fd, chunk, at);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return; // the reader is gone: keep draining the plugin
      }
    }
  };
  const text = (stream: string, chunks: Buffer[]) => {
    const bytes = Buffer.concat(chunks);
    const decoded = bytes.toString('utf8');
    return Buffer.from(decoded, 'utf8').equals(bytes)
      ? { [stream]: decoded }
      : { [`${stream}_base64`]: bytes.toString('base64') };
  };
  const log = (exit: number | null, signal: string | null) => {
    const line = {
      plugin: settings.pluginId,
      argv,
      env,
      exit,
      ...(signal ? { signal } : {}),
      ...text('stdout', stdout),
      ...text('stderr', stderr),
      start,
      duration_ms: Math.round(Number(process.hrtime.bigint() - started) / 1e3) / 1e3,
    };
    try {
      fs.appendFileSync(settings.log, `${JSON.stringify(line)}\n`, { mode: 0o600 });
    } catch {
      // A log that cannot be written costs the record, never the call.
    }
  };
  const finish = (exit: number | null, signal: NodeJS.Signals | null) => {
    if (signal) {
      // Die of the same signal, so the agent reads the same wait status.
      for (const name of forwarded) process.removeAllListeners(name);
      if (signal !== 'SIGKILL' && signal !== 'SIGSTOP' && !forwarded.includes(signal as never)) {
        const ignore = () => undefined;
        process.on(signal, ignore); // node ignores some (SIGPIPE); taking a listener off restores the default
        process.removeListener(signal, ignore);
      }
      // Its own PID: this file may use nothing but the modules it is handed.
      // eslint-disable-next-line no-restricted-properties
      process.kill(process.pid, signal);
      setTimeout(() => process.exit(128 + (os.constants.signals[signal] ?? 0)), 1000).unref();
      return;
    }
    process.exit(exit ?? 1);
  };

  const [file, args] = settings.setpriv
    ? [settings.setpriv, ['--pdeathsig', 'KILL', '--', settings.original, ...argv]]
    : [settings.original, argv];
  // Listening before the plugin starts: a signal sent once the plugin runs (a loaded machine
  // can run it before this process takes its next step) must reach it, not kill the recorder.
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
    env,
    argv0: settings.setpriv ? settings.setpriv : settings.pluginPath,
    stdio: ['inherit', 'pipe', 'pipe'],
  }));
  for (const name of early) forward(name);
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout.push(chunk);
    writeAll(1, chunk);
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr.push(chunk);
    writeAll(2, chunk);
  });
  let failed = false;
  child.on('error', (err) => {
    failed = true;
    const message = Buffer.from(`dhv record: cannot run ${settings.original}: ${err.message}\n`);
    stderr.push(message);
    writeAll(2, message);
    log(127, null);
    process.exit(127);
  });
  child.on('close', (exit, signal) => {
    if (failed) return;
    log(exit, signal);
    finish(exit, signal);
  });
}

/** The recorder file's text: `#!<node>`, its mark, and recorderMain called with its settings. */
export function recorderSource(node: string, settings: RecorderSettings): string {
  return [
    `#!${node}`,
    `// ${RECORDER_MARK} (${settings.pluginId}).`,
    `// The plugin itself is kept at ${settings.original}; \`dhv record --remove ${settings.pluginPath}\` puts it back.`,
    `'use strict';`,
    `(${recorderMain.toString()})(${JSON.stringify(settings)}, {`,
    `  childProcess: require('node:child_process'),`,
    `  fs: require('node:fs'),`,
    `  os: require('node:os'),`,
    `});`,
    '',
  ].join('\n');
}
