import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loopDevicesBackedBelow, mountsAtOrBelow } from '@dhv/sdk/host';
import { test } from 'vitest';
import { dataDirLayout } from '@dhv/harness';
import { DHV_BIN } from './checkout-paths.js';
import { killProcessesMentioning } from './processes.js';
import { runDhv, type DhvRun } from './run-dhv.js';
import { releaseMountsAndLoops, removeTempDir, tempDir } from './temp-dir.js';

/** A temporary simulated agent: its own data dir, plugin dir and volumes dir, and a `dhv` bound to them. */
export interface TempAgent {
  dir: string;
  dataDir: string;
  pluginDir: string;
  volumesDir: string;
  /** Runs `dhv <args> --data-dir <dataDir>` (plus `--config` when the agent has one). */
  dhv(...args: string[]): Promise<DhvRun>;
  /** Runs with `--json` and parses stdout; throws with stderr when the command fails. */
  json<T = any>(...args: string[]): Promise<T>;
  /** Starts `dhv` without waiting, for kill -9 and concurrency tests. */
  start(...args: string[]): ChildProcess;
  /** Writes an HCL file into the agent's dir and returns its path. */
  file(name: string, text: string): Promise<string>;
  /** Writes an executable plugin into the plugin dir. */
  plugin(name: string, script: string): Promise<string>;
  config?: string;
  /** Kills the processes it started and the plugins they ran, unmounts and detaches whatever lives under the agent's dir, removes the dir. */
  cleanup(): Promise<void>;
}

export async function tempAgent(options: { config?: (dir: string) => string } = {}): Promise<TempAgent> {
  const dir = await tempDir('agent-test');
  const dataDir = join(dir, 'data');
  const { pluginDir, volumesDir } = dataDirLayout(dataDir);
  await mkdir(pluginDir, { recursive: true });
  const children = new Set<ChildProcess>();
  let configFile: string | undefined;
  if (options.config) {
    configFile = join(dir, 'agent.hcl');
    await writeFile(configFile, options.config(dir));
  }
  const argv = (args: string[]) => [...args, '--data-dir', dataDir, ...(configFile ? ['--config', configFile] : [])];
  const env = () => {
    const e = { ...process.env };
    delete e.DHV_DATA_DIR;
    return e;
  };
  const agent: TempAgent = {
    dir,
    dataDir,
    pluginDir,
    volumesDir,
    ...(configFile ? { config: configFile } : {}),
    dhv: (...args) => runDhv(argv(args), { cwd: dir, env: { DHV_DATA_DIR: undefined } }),
    async json(...args) {
      const run = await agent.dhv(...args, '--json');
      if (run.exitCode !== 0) throw new Error(`dhv ${args.join(' ')} failed (${run.exitCode}): ${run.stderr}`);
      return JSON.parse(run.stdout);
    },
    start(...args) {
      const child = spawn(process.execPath, [DHV_BIN, ...argv(args)], {
        cwd: dir,
        env: env(),
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      children.add(child);
      child.once('exit', () => children.delete(child));
      return child;
    },
    async file(name, text) {
      const path = join(dir, name);
      await writeFile(path, text);
      return path;
    },
    async plugin(name, script) {
      const path = join(pluginDir, name);
      await writeFile(path, script);
      await chmod(path, 0o755);
      return path;
    },
    async cleanup() {
      for (const child of children) child.kill('SIGKILL');
      // A plugin run outlives its killed `dhv` (a gated plugin blocks opening its FIFO for good).
      killProcessesMentioning(dir);
      await releaseMountsAndLoops(dir).catch(() => []);
      const left = [
        ...(await mountsAtOrBelow(dir)).map((m) => m.mountPoint),
        ...(await loopDevicesBackedBelow(dir)).map((l) => l.device),
      ];
      await removeTempDir(dir);
      if (left.length > 0) throw new Error(`left behind: ${left.join(', ')}`);
    },
  };
  return agent;
}

/**
 * `it` with a fresh `tempAgent(options)` for each test, cleaned up after it: tests that
 * share no agent can then run side by side (`describe.concurrent`).
 */
export function testWithAgent(options: { config?: (dir: string) => string } = {}) {
  return test.extend<{ agent: TempAgent }>({
    // vitest reads the fixtures a test needs from this first parameter's destructuring.
    // eslint-disable-next-line no-empty-pattern
    agent: async ({}, use) => {
      const agent = await tempAgent(options);
      try {
        await use(agent);
      } finally {
        await agent.cleanup();
      }
    },
  });
}

/** A volume spec in HCL. */
export function volumeHcl(fields: Record<string, string>, extra = ''): string {
  const body = Object.entries({ type: 'host', ...fields })
    .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
    .join('\n');
  return `${body}\n${extra}\n`;
}

/**
 * A small bash plugin for tests: no PATH (the agent gives none), so tools by absolute
 * path. create makes `<volumes dir>/<id>` and reports DHV_CAPACITY_MIN_BYTES as bytes.
 */
export function bashPlugin({ version = '1.0.0', createPrefix = '' } = {}): string {
  return `#!/bin/bash
dir="$DHV_VOLUMES_DIR/$DHV_VOLUME_ID"
case "$1" in
  fingerprint) echo '{"version": "${version}"}' ;;
  create)
    ${createPrefix}
    /bin/mkdir -p "$dir" || exit 1
    echo "{\\"path\\": \\"$dir\\", \\"bytes\\": $DHV_CAPACITY_MIN_BYTES}" ;;
  delete) /bin/rm -rf "$dir"; echo '{}' ;;
  *) echo '{"error": "unknown operation"}'; exit 1 ;;
esac
`;
}
