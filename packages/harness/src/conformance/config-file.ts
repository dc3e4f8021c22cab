import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { parseHclOrJson, readSource, singleBlock } from '../config/read-document.js';
import { DhvError } from '../errors/dhv-error.js';
import { InvalidSettingsError, type SettingsInput } from './settings.js';

/**
 * What `dhv check --config FILE` reads (HCL or JSON), like csi-sanity's test config:
 * what the plugin needs to be judged at all.
 *
 *     parameters { pool = "dhvtest" }        # or parameters = { ... }
 *     capacity_min   = "64MiB"
 *     capacity_max   = "128MiB"
 *     capacity_floor = "300MiB"             # the smallest volume the plugin makes
 *     expansion_size = "256MiB"             # capacity_min of the larger create
 *     repeat         = 3
 *     supports       = ["expansion"]       # what the plugin declares it does
 *     setup    = ["truncate -s 1G /var/tmp/dhvtest.img", "zpool create dhvtest /var/tmp/dhvtest.img"]
 *     teardown = ["zpool destroy dhvtest", "rm -f /var/tmp/dhvtest.img"]
 *
 * Commands run with /bin/sh -c, one after another, from the config file's directory.
 */
export interface CheckConfig extends SettingsInput {
  setup: string[];
  teardown: string[];
  /** Where the commands run: the config file's directory. */
  cwd: string;
}

const KEYS = [
  'parameters',
  'capacity_min',
  'capacity_max',
  'capacity_floor',
  'expansion_size',
  'repeat',
  'supports',
  'setup',
  'teardown',
];

function invalid(file: string, message: string): never {
  throw new InvalidSettingsError(`${file}: ${message}`, 'config');
}

function sizeOf(file: string, key: string, value: unknown): string | number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' || typeof value === 'number') return value;
  return invalid(file, `${key} must be a size like "64MiB" or a number of bytes`);
}

function commands(file: string, key: string, value: unknown): string[] {
  if (value === undefined) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || !list.every((c) => typeof c === 'string'))
    return invalid(file, `${key} must be a list of shell commands`);
  return list;
}

export async function readCheckConfig(file: string): Promise<CheckConfig> {
  let doc: Record<string, unknown>;
  try {
    doc = await parseHclOrJson(await readSource(file), file);
  } catch (err) {
    return invalid(file, (err as Error).message);
  }
  const unknown = Object.keys(doc).filter((k) => !KEYS.includes(k));
  if (unknown.length > 0)
    invalid(file, `unknown setting ${unknown.map((k) => JSON.stringify(k)).join(', ')}; known: ${KEYS.join(', ')}`);
  const params = Array.isArray(doc.parameters) ? singleBlock(doc.parameters) : doc.parameters;
  if (params !== undefined && (params === null || typeof params !== 'object' || Array.isArray(params)))
    invalid(file, 'parameters must be a map of strings');
  const parameters =
    params === undefined ? undefined : Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)]));
  if (doc.repeat !== undefined && typeof doc.repeat !== 'number') invalid(file, 'repeat must be a number');
  const supports = doc.supports;
  if (supports !== undefined && (!Array.isArray(supports) || !supports.every((f) => typeof f === 'string')))
    invalid(file, 'supports must be a list of features, like ["expansion"]');
  return {
    ...(parameters ? { parameters } : {}),
    capacityMin: sizeOf(file, 'capacity_min', doc.capacity_min),
    capacityMax: sizeOf(file, 'capacity_max', doc.capacity_max),
    capacityFloor: sizeOf(file, 'capacity_floor', doc.capacity_floor),
    expansionSize: sizeOf(file, 'expansion_size', doc.expansion_size),
    ...(typeof doc.repeat === 'number' ? { repeat: doc.repeat } : {}),
    ...(supports === undefined ? {} : { supports: supports as string[] }),
    setup: commands(file, 'setup', doc.setup),
    teardown: commands(file, 'teardown', doc.teardown),
    cwd: file === '-' ? process.cwd() : dirname(resolve(file)),
  };
}

export class SetupCommandError extends DhvError {
  readonly code = 'CHECK_SETUP_FAILED';
  constructor(
    readonly phase: 'setup' | 'teardown',
    readonly command: string,
    readonly output: string,
    how: string,
  ) {
    super(`${phase} command failed (${how}): ${command}${output.trim() ? `\n${output.trim()}` : ''}`, {
      phase,
      command,
    });
  }
}

/** Runs each command with /bin/sh -c in order; the first failure throws with its output. */
export async function runCommands(phase: 'setup' | 'teardown', list: readonly string[], cwd: string): Promise<void> {
  for (const command of list) {
    const { code, signal, output } = await new Promise<{
      code: number | null;
      signal: NodeJS.Signals | null;
      output: string;
    }>((done) => {
      const child = spawn('/bin/sh', ['-c', command], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      child.once('error', (err) => done({ code: null, signal: null, output: err.message }));
      child.once('close', (c, s) => done({ code: c, signal: s, output }));
    });
    if (code !== 0)
      throw new SetupCommandError(phase, command, output, signal ? `signal: ${signal}` : `exit status ${code}`);
  }
}
