import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { gunzipSync } from 'node:zlib';
import { AgentError } from '../errors/agent-error.js';

type Callback = (err: string | null, json: string) => void;
type Bridge = { parse?: (filename: string, contents: string, done: Callback) => void };
type GoRuntime = { importObject: object; run(instance: object): Promise<void> };
/** The part of the WebAssembly global used here (the harness compiles without the DOM's types). */
const wasm = (
  globalThis as unknown as {
    WebAssembly: { instantiate(bytes: Uint8Array, imports: object): Promise<{ instance: object }> };
  }
).WebAssembly;

const PACKAGE = '@cdktn/hcl2json';
/** The global the package's Go program (tmccombs/hcl2json on hashicorp/hcl v2) registers its functions on. */
const BRIDGE_GLOBAL = '__parse_terraform_config_wasm__';

let bridge: Promise<Required<Bridge>> | undefined;

/**
 * HashiCorp's own HCL library (hashicorp/hcl v2) compiled to WebAssembly, as `@cdktn/hcl2json`
 * ships it, started once per process. The package's own loader waits for the Go program by
 * polling with timers; this one starts the same program and waits for nothing. V8 compiles
 * the module with its baseline compiler only: the 7 MB program runs for a few milliseconds
 * per `dhv job run`, and optimising it would cost three times the whole parse in CPU.
 */
function startHcl(): Promise<Required<Bridge>> {
  bridge ??= (async () => {
    const dir = dirname(createRequire(import.meta.url).resolve(`${PACKAGE}/package.json`));
    setFlagsFromString('--liftoff-only');
    // Go's wasm_exec for Node: defines globalThis.Go.
    createRequire(import.meta.url)(join(dir, 'wasm', 'bridge_wasm_exec.js'));
    const Go = (globalThis as unknown as { Go: new () => GoRuntime }).Go;
    const go = new Go();
    const exports: Bridge = {};
    (globalThis as Record<string, unknown>)[BRIDGE_GLOBAL] = exports;
    const { instance } = await wasm.instantiate(gunzipSync(readFileSync(join(dir, 'main.wasm.gz'))), go.importObject);
    void go.run(instance);
    if (!exports.parse) throw new Error(`${PACKAGE} did not start: no parse function`);
    return exports as Required<Bridge>;
  })();
  return bridge;
}

/**
 * Parses HCL2 as Nomad's job parser reads its syntax: blocks come back as `{label: [body, ...]}`
 * or `[body, ...]`, attributes as their values, an expression it cannot evaluate as `"${...}"`.
 */
export async function parseHcl2(filename: string, contents: string): Promise<Record<string, unknown>> {
  const hcl = await startHcl();
  const json = await new Promise<string>((resolve, reject) =>
    hcl.parse(filename, contents, (err, out) => (err ? reject(new Error(err)) : resolve(out))),
  ).catch((err: Error) => {
    // The library's message: `parse config: [file:line,col-line,col: Summary; Detail]`, as hcl prints diagnostics.
    const message = err.message.replace(/^parse config: \[(.*)\]$/s, '$1');
    throw new AgentError('SPEC_INVALID', `Error parsing job file from ${filename}:\n${message}`, { file: filename });
  });
  return JSON.parse(json) as Record<string, unknown>;
}
