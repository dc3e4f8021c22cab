import { readFile } from 'node:fs/promises';
import { DhvError } from '../errors/dhv-error.js';

export class DocumentError extends DhvError {
  readonly code = 'DOCUMENT_INVALID';
  constructor(message: string, readonly file: string) {
    super(message, { file });
  }
}

/** Reads a file, or stdin when `file` is `-`. */
export async function readSource(file: string, stdin: NodeJS.ReadableStream = process.stdin): Promise<string> {
  if (file !== '-') {
    try {
      return await readFile(file, 'utf8');
    } catch (err) {
      throw new DocumentError(`cannot read ${file}: ${(err as Error).message}`, file);
    }
  }
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Parses HCL or JSON the way Nomad reads its files: JSON when the text is a JSON object,
 * HCL otherwise (through HashiCorp's own parser, so blocks come back as arrays).
 */
export async function parseHclOrJson(text: string, file: string): Promise<Record<string, unknown>> {
  const name = file === '-' ? '<stdin>' : file;
  let parsed: unknown;
  if (text.trimStart().startsWith('{')) {
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new DocumentError(`${name} is not valid JSON: ${(err as Error).message}`, file);
    }
  } else {
    // The parser is a WebAssembly module; load it only when HCL is actually read.
    const { parse } = await import('@cdktf/hcl2json');
    try {
      parsed = await parse(name.endsWith('.hcl') ? name : `${name}.hcl`, text);
    } catch (err) {
      throw new DocumentError(`${name} is not valid HCL: ${(err as Error).message.replace(/^parse config: /, '')}`, file);
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new DocumentError(`${name} must hold an object`, file);
  }
  return parsed as Record<string, unknown>;
}

/** HCL gives a block as an array of bodies and JSON may give a single object: both become a list. */
export function blocks(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

/** A block that may appear once: the last body wins, as repeated HCL attributes would. */
export function singleBlock(value: unknown): Record<string, unknown> | undefined {
  const list = blocks(value);
  const merged: Record<string, unknown> = {};
  for (const body of list) if (body && typeof body === 'object') Object.assign(merged, body);
  return list.length === 0 ? undefined : merged;
}
