import { createRequire } from 'node:module';
import { AgentError } from '../errors/agent-error.js';

type Hcl2Json = { parse(filename: string, contents: string): Promise<unknown> };

/**
 * HCL2 read by HashiCorp's own library (hashicorp/hcl v2, through `@cdktn/hcl2json`, its
 * WebAssembly build as tmccombs/hcl2json): blocks come back as `{label: [body, ...]}` or
 * `[body, ...]`, attributes as their values, an expression it cannot evaluate as `"${...}"`.
 * Loaded on first use only: the module compiles its WebAssembly when it is required.
 */
export async function parseHcl2(filename: string, contents: string): Promise<Record<string, unknown>> {
  const hcl = createRequire(import.meta.url)('@cdktn/hcl2json') as Hcl2Json;
  try {
    return (await hcl.parse(filename, contents)) as Record<string, unknown>;
  } catch (err) {
    // The library's message: `parse config: [file:line,col-line,col: Summary; Detail]`, as hcl prints diagnostics.
    const message = (err as Error).message.replace(/^parse config: \[(.*)\]$/s, '$1');
    throw new AgentError('SPEC_INVALID', `Error parsing job file from ${filename}:\n${message}`, { file: filename });
  }
}
