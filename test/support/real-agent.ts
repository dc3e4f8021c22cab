import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InProcessAgent } from './agent-in-process.js';
import { killTasks } from './job-tasks.js';
import { builtPlugin, DHV_BIN } from './checkout-paths.js';
import { readRecordedCalls, recordedFolders, recorderScript } from './plugin-recorder.js';
import { removeTempDir, tempDir } from './temp-dir.js';

/**
 * Replaying ../vectors/real-agent/ (see its README): what a real Nomad 2.0.5 agent and its
 * CLI did, run again against dhv in a sandbox laid out as the agent's was (`<ROOT>/plugins`,
 * `<ROOT>/volumes`, every plugin behind a recorder), then both sides put through the same
 * placeholders and compared.
 */

export const REAL_AGENT_DIR = fileURLToPath(new URL('../vectors/real-agent/', import.meta.url));
export const NOMAD_SPECS_DIR = fileURLToPath(new URL('../vectors/nomad-specs/', import.meta.url));

export interface PluginCall {
  plugin: string;
  argv: string[];
  env: Record<string, string>;
  exit: number | null;
  stdout: string;
  stderr: string;
}

export interface Step {
  run: string;
  note?: string;
  exit: number;
  stdout: string;
  stderr: string;
  plugin_calls?: PluginCall[];
}

export interface Scenario {
  scenario: string;
  about: string;
  files: Record<string, string>;
  steps: Step[];
}

export interface SpecThroughAgent {
  file: string;
  exit: number;
  stdout: string;
  stderr: string;
  volume?: Record<string, unknown>;
}

/** Every scenario file `NN-*.json`, by file name. */
export function loadScenarios(): Array<{ file: string; scenario: Scenario }> {
  return readdirSync(REAL_AGENT_DIR)
    .filter((f) => /^\d+-.*\.json$/.test(f))
    .sort()
    .map((file) => ({ file, scenario: JSON.parse(readFileSync(join(REAL_AGENT_DIR, file), 'utf8')) as Scenario }));
}

export function loadSpecsThroughAgent(): SpecThroughAgent[] {
  return readFileSync(join(REAL_AGENT_DIR, 'nomad-specs-through-agent.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as SpecThroughAgent);
}

/** Nomad's CLI prints these on stderr; they say nothing about volumes (README). */
function withoutWebUiHints(text: string): string {
  return text.replace(/\n*==> View [^\n]* in the Web UI: [^\n]*\n?/g, '');
}

/** dhv says which data dir a command used (here the one `--config` names); Nomad's CLI, with no data dir of its own, does not. */
function withoutDataDirLine(text: string): string {
  return text.replace(/^==> Data dir: [^\n]*\n/gm, '');
}

/**
 * One side's IDs, numbered in the order first seen, so that the agent's placeholders
 * (`<VOL1>`, `<UUID1>`, `<ALLOC1>`, `<VOL>`: matched by position, not by kind) and dhv's
 * real IDs meet as `<ID1>`, `<ID2>`, ...
 */
export class Placeholders {
  private readonly ids = new Map<string, number>();

  constructor(
    private readonly side: 'nomad' | 'dhv',
    private readonly root = '',
    private readonly nodeId = '',
  ) {}

  private number(key: string): number {
    let n = this.ids.get(key);
    if (n === undefined) {
      n = this.ids.size + 1;
      this.ids.set(key, n);
    }
    return n;
  }

  text(value: string): string {
    if (this.side === 'nomad') {
      return value.replace(/<(VOL|UUID|ALLOC|EVAL|CLAIM)(\d*)(:short)?>/g, (_m, kind: string, n: string, short) => {
        return `<ID${this.number(`${kind}${n}`)}${short ?? ''}>`;
      });
    }
    let out = value;
    if (this.root !== '') out = out.replaceAll(this.root, '<ROOT>');
    if (this.nodeId !== '') out = out.replaceAll(this.nodeId, '<NODE>');
    // Lowercase only: an uppercase UUID is what a spec wrote, and Nomad's recorder kept it as it was.
    out = out.replace(
      /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g,
      (id) => `<ID${this.number(id)}>`,
    );
    out = out.replace(/\b[0-9a-f]{8}\b/g, (short) => {
      if (this.nodeId.startsWith(short)) return '<NODE:short>';
      for (const [id, n] of this.ids) if (id.startsWith(`${short}-`)) return `<ID${n}:short>`;
      return short;
    });
    // A table row's ID whose full form was not printed (an allocation's, a claim's): the README's <SHORT>.
    out = out.replace(/^[0-9a-f]{8}(?= )/gm, '<SHORT>');
    out = out.replace(/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)/g, '<TIME>');
    out = out.replace(/\b\d+(\.\d+)?(ms|s|m|h)( \d+(ms|s|m))* ago\b/g, '<AGO>');
    return out;
  }

  /** A JSON value with every string (and key) put through `text`. */
  json<T>(value: T): T {
    if (typeof value === 'string') return this.text(value) as T;
    if (Array.isArray(value)) return value.map((v: unknown) => this.json(v)) as T;
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [this.text(k), this.json(v)])) as T;
    }
    return value;
  }

  output(value: string): string {
    return withAgoPaddingEven(this.text(withoutWebUiHints(this.side === 'dhv' ? withoutDataDirLine(value) : value)));
  }
}

/** A column after an `<AGO>` is padded to the width of the durations it replaced (`3s ago`, `1m12s ago`): two spaces on both sides. */
function withAgoPaddingEven(text: string): string {
  return text.replace(/<AGO> {2,}(?=\S)/g, '<AGO>  ');
}

/**
 * Stdout as compared: without the lines a step's closing `| grep <word>` kept only because a
 * random ID held the word (once IDs are placeholders, such a line no longer has it), and with
 * the lines whose order follows random IDs in a fixed order.
 */
export function comparableStdout(text: string, run: string): string {
  const word = /\|\s*grep\s+(\w[\w-]*)\s*$/.exec(run)?.[1];
  const kept = word === undefined ? text : text.replace(/^.*$\n?/gm, (line) => (line.includes(word) ? line : ''));
  return withIdOrderSorted(kept, run);
}

/**
 * Lines whose order follows random IDs put in a fixed order: each run of table rows that starts
 * with an ID (both sides list volumes by ID), or every line when the step pipes its output
 * through `sort`.
 */
function withIdOrderSorted(text: string, run: string): string {
  const lines = text.split('\n');
  if (/\|\s*sort\b/.test(run)) return lines.sort().join('\n');
  const out: string[] = [];
  let rows: string[] = [];
  for (const line of [...lines, '']) {
    if (/^<(ID\d+:short|SHORT)>/.test(line)) {
      rows.push(line);
      continue;
    }
    out.push(...rows.sort(), line);
    rows = [];
  }
  return out.slice(0, -1).join('\n');
}

/**
 * The cause Nomad's CLI wraps as `Error <doing>: Unexpected response code: 500 (<cause>)`, which
 * a simulator without an HTTP API prints word for word (README); or the CLI's own error line.
 * dhv prints `Error: ` and then exactly that, with its advice on the lines below.
 */
export function expectedErrorStart(stderr: string): string | undefined {
  const server = /^Error [^:\n]+: Unexpected response code: \d{3} \(([\s\S]*)\)\n$/.exec(stderr);
  if (server) return `Error: ${server[1]}\n`;
  if (/^Error [^\n]*:/.test(stderr)) return `Error: ${stderr}`;
  return undefined;
}

/** How a step's stderr is judged: whole, or by its first part when Nomad printed an error. */
export function stderrAgrees(expected: string, actual: string): boolean {
  const start = expectedErrorStart(expected);
  if (start === undefined) return expected === actual;
  return actual.startsWith(start);
}

/** Calls in the order they started, except that a run of fingerprints (concurrent on both sides) is put in plugin order. */
export function orderedCalls(calls: readonly PluginCall[]): PluginCall[] {
  const out: PluginCall[] = [];
  let run: PluginCall[] = [];
  const flush = () => {
    out.push(...run.sort((a, b) => a.plugin.localeCompare(b.plugin)));
    run = [];
  };
  for (const call of calls) {
    if (call.argv[0] === 'fingerprint') run.push(call);
    else {
      flush();
      out.push(call);
    }
  }
  flush();
  return out;
}

export interface StepResult {
  exit: number | null;
  stdout: string;
  stderr: string;
  calls: PluginCall[];
}

/** The small helpers the scenarios' `run` lines use (README), answered by dhv. */
function helperScripts(dhv: string): Record<string, string> {
  const node = `#!${process.execPath}`;
  const common = `const { execFileSync } = require('node:child_process');
const dhv = (...args) => JSON.parse(execFileSync(${JSON.stringify(dhv)}, [...args, '--json'], { encoding: 'utf8', maxBuffer: 1 << 26 }));
const sorted = (v) => Array.isArray(v) ? v.map(sorted) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])])) : v;
const byName = (name, ns) => dhv('volume', 'status', '-type', 'host', '-namespace', ns || 'default').find((v) => v.Name === name);
`;
  return {
    idof: `${node}\n${common}const v = byName(process.argv[2], process.argv[3]); if (v) console.log(v.ID);\n`,
    apivol: `${node}\n${common}const v = byName(process.argv[2], process.argv[3]);
const untimed = (v) => Array.isArray(v) ? v.map(untimed) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).filter(([k]) => !['CreateIndex', 'ModifyIndex', 'CreateTime', 'ModifyTime'].includes(k)).map(([k, x]) => [k, untimed(x)])) : v;
if (v) console.log(JSON.stringify(sorted(untimed(dhv('volume', 'status', '-type', 'host', '-namespace', v.Namespace, v.ID))), null, 1));\n`,
    hostvols: `${node}\n${common}console.log(JSON.stringify(sorted(dhv('node', 'status', '-self').HostVolumes), null, 1));\n`,
    nodeid: `${node}\n${common}console.log(dhv('node', 'status', '-self').ID);\n`,
    // The two reads of Nomad's HTTP API the scenarios make, answered by dhv's -json of the same objects.
    curl: `${node}\n${common}const url = process.argv.slice(2).find((a) => a.includes('/v1/'));
const u = new URL(url ?? '/', 'http://127.0.0.1:4646');
const ns = u.searchParams.get('namespace') || 'default';
const allocs = /^\\/v1\\/job\\/([^/]+)\\/allocations$/.exec(u.pathname);
if (allocs) console.log(JSON.stringify(dhv('job', 'status', '-namespace', ns, decodeURIComponent(allocs[1])).Allocations));
else if (u.pathname === '/v1/volumes/claims') {
  const job = u.searchParams.get('job_id');
  console.log(JSON.stringify(dhv('volume', 'claim', 'list', '-namespace', ns).filter((c) => !job || c.JobID === job)));
} else { console.error(\`curl: the sandbox answers no \${u.pathname}\`); process.exitCode = 22; }\n`,
    // Nomad places and starts a job's allocations after \`job run\` returns; dhv before it returns, so
    // a short wait suffices: it only covers a task that ends by itself.
    waitjob: `${node}\n${common}const [job, want, ns] = process.argv.slice(2);
const statuses = () => { try { return dhv('job', 'status', '-namespace', ns || 'default', job).Allocations.map((a) => a.ClientStatus); } catch { return []; } };
const done = (s) => s.length > 0 && s.every((x) => x === want);
const until = Date.now() + 3000;
let now = statuses();
while (!done(now) && Date.now() < until) { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200); now = statuses(); }
if (done(now)) console.log(\`\${job}: \${now.join(' ')}\`);
else { console.log(\`\${job}: still \${now.join(' ')}\`); process.exitCode = 1; }\n`,
  };
}

/**
 * A sandbox laid out as the recorded agent's: `<root>/plugins` (every plugin of the vectors and
 * dhv's two, each behind a recorder), `<root>/volumes`, `<root>/data`, a `work/` folder the steps
 * run in, and `$NOMAD` / `$AGENTCTL` answered by dhv.
 */
export class Sandbox {
  private constructor(
    readonly root: string,
    readonly nodeId: string,
  ) {}

  get work(): string {
    return join(this.root, 'work');
  }

  /** Where the recorders keep one folder per plugin call (plugin-recorder.ts). */
  private get calls(): string {
    return join(this.root, 'calls');
  }

  static async make(options: { recorded: boolean; plainPlugins?: readonly string[] }): Promise<Sandbox> {
    const root = await tempDir('real-agent');
    for (const d of ['plugins', 'volumes', 'data', 'work', 'bin', 'real-plugins', 'calls']) mkdirSync(join(root, d));
    const config = join(root, 'agent.hcl');
    writeFileSync(
      config,
      `data_dir = "${root}/data"\nclient {\n  host_volume_plugin_dir = "${root}/plugins"\n  host_volumes_dir = "${root}/volumes"\n}\n`,
    );
    const dhv = join(root, 'bin', 'nomad');
    writeFileSync(
      dhv,
      `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(DHV_BIN)} "$@" --config ${config}\n`,
    );
    writeFileSync(
      join(root, 'bin', 'agentctl'),
      `#!/bin/sh\ncase "$1" in reboot) exec ${dhv} agent restart --reboot >/dev/null ;; *) exec ${dhv} agent restart >/dev/null ;; esac\n`,
    );
    for (const [name, text] of Object.entries(helperScripts(dhv))) writeFileSync(join(root, 'bin', name), text);
    for (const name of readdirSync(join(root, 'bin'))) chmodSync(join(root, 'bin', name), 0o755);

    const plugins: Record<string, string> = {
      'dhv-mkdir': builtPlugin('dhv-mkdir'),
      'dhv-loopback': builtPlugin('dhv-loopback'),
    };
    for (const name of readdirSync(join(REAL_AGENT_DIR, 'plugins')))
      plugins[name] = join(REAL_AGENT_DIR, 'plugins', name);
    for (const name of options.plainPlugins ?? []) plugins[name] = join(REAL_AGENT_DIR, 'plugins', 'stub-dir');
    for (const [name, file] of Object.entries(plugins)) {
      const installed = join(root, 'plugins', name);
      if (options.recorded) {
        const real = join(root, 'real-plugins', name);
        copyFileSync(file, real);
        chmodSync(real, 0o755);
        writeFileSync(installed, recorderScript(name, real, join(root, 'calls')));
      } else copyFileSync(file, installed);
      chmodSync(installed, 0o755);
    }
    const sandbox = new Sandbox(root, '');
    const start = await sandbox.sh('$AGENTCTL restart $ROOT');
    if (start.exit !== 0) throw new Error(`the sandbox's agent did not start: ${start.stderr}`);
    return new Sandbox(root, (await sandbox.inProcess().node<{ ID: string }>()).ID);
  }

  writeFiles(files: Record<string, string>): void {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(this.work, name), text);
  }

  /**
   * A scenario's step, run as recorded. A running task's log read empty is read again for up to
   * 5 s: the recording read it after its job had run for a minute, a replay just after `waitjob`
   * saw the task start, and what the task prints is judged, not how soon it prints it.
   */
  async step(step: Step): Promise<StepResult> {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const run = await this.sh(step.run);
      const unwritten =
        /^\$NOMAD alloc logs\b/.test(step.run) && run.exit === 0 && run.stdout === '' && step.stdout !== '';
      if (!unwritten || Date.now() > deadline) return run;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** Runs one `run` line as the recorder did: /bin/sh in the work folder, with the README's names set. */
  async sh(run: string): Promise<StepResult> {
    const bin = join(this.root, 'bin');
    const nomad = join(bin, 'nomad');
    const before = new Set(recordedFolders(this.calls));
    const result = await new Promise<StepResult>((resolve, reject) => {
      const child = spawn('/bin/sh', ['-c', run], {
        cwd: this.work,
        env: {
          ...process.env,
          NO_COLOR: '1',
          PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
          NOMAD: nomad,
          NOMAD_ADDR: 'http://127.0.0.1:4646',
          AGENTCTL: join(bin, 'agentctl'),
          ROOT: this.root,
          DHV_DATA_DIR: '',
          NOMAD_NAMESPACE: '',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      child.once('error', reject);
      child.once('close', (exit) => resolve({ exit, stdout, stderr, calls: [] }));
    });
    result.calls = readRecordedCalls(this.calls, before).map(({ plugin, argv, env, exit, stdout, stderr }) => ({
      plugin,
      argv,
      env,
      exit,
      stdout,
      stderr,
    }));
    return result;
  }

  /** The sandbox's agent (its config, its data dir) through the library calls the commands make, in this process. */
  inProcess(): InProcessAgent {
    return new InProcessAgent(join(this.root, 'data'), join(this.root, 'agent.hcl'));
  }

  placeholders(): Placeholders {
    return new Placeholders('dhv', this.root, this.nodeId);
  }

  /** Kills what the scenario's jobs left running (a job stopped by no step), then removes the sandbox. */
  async cleanup(): Promise<void> {
    await killTasks(join(this.root, 'data'));
    await removeTempDir(this.root);
  }
}
