import * as hcl1 from '../go/hcl1/index.js';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { DhvError } from '../errors/dhv-error.js';

/**
 * The most a volume spec or agent config may hold. Nomad's are a few hundred bytes; this
 * leaves room for parameters as large as a plugin's environment can carry (128 KiB), and
 * keeps a stray binary or log file from reaching the HCL parser, which takes seconds per
 * 100 KB of garbage.
 */
export const MAX_DOCUMENT_BYTES = 256 * 1024;
/** Deeper nesting than this is refused before parsing: real specs nest 3 levels, and the parsers recurse. */
export const MAX_DOCUMENT_DEPTH = 1000;
/** A parser's message is cut to this many characters: a bad 1 MB file must not give a 1 MB error. */
const MAX_PARSER_MESSAGE = 400;

export class DocumentError extends DhvError {
  readonly code = 'DOCUMENT_INVALID';
  constructor(
    message: string,
    readonly file: string,
  ) {
    super(message, { file });
  }
}

/** Reads a file, or stdin when `file` is `-`, refusing more than MAX_DOCUMENT_BYTES and anything that is not UTF-8 text. */
export async function readSource(file: string, stdin: NodeJS.ReadableStream = process.stdin): Promise<string> {
  const name = displayName(file);
  const bytes = file === '-' ? await readCapped(stdin, name, file) : await readFileCapped(file);
  return decodeText(bytes, name, file);
}

async function readFileCapped(file: string): Promise<Buffer> {
  let handle;
  try {
    // Non-blocking, so a FIFO or device opens at once and is refused below instead of hanging the read.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw new DocumentError(`cannot read ${file}: ${(err as Error).message}`, file);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile())
      throw new DocumentError(
        `cannot read ${file}: not a regular file (a FIFO, device or directory is never waited on)\nGive the path of a file, or - to read standard input.`,
        file,
      );
    if (info.size > MAX_DOCUMENT_BYTES) throw tooLarge(file, file, info.size);
    const buffer = Buffer.alloc(MAX_DOCUMENT_BYTES + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > MAX_DOCUMENT_BYTES) throw tooLarge(file, file);
    }
    return buffer.subarray(0, length);
  } catch (err) {
    if (err instanceof DocumentError) throw err;
    throw new DocumentError(`cannot read ${file}: ${(err as Error).message}`, file);
  } finally {
    await handle.close();
  }
}

async function readCapped(stream: NodeJS.ReadableStream, name: string, file: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of stream) {
    const buffer = Buffer.from(chunk as Buffer);
    length += buffer.length;
    if (length > MAX_DOCUMENT_BYTES) throw tooLarge(name, file);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

function tooLarge(name: string, file: string, size?: number): DocumentError {
  const what = size === undefined ? `more than ${MAX_DOCUMENT_BYTES} bytes` : `${size} bytes`;
  return new DocumentError(
    `${name} is ${what}: dhv reads at most ${MAX_DOCUMENT_BYTES} bytes (256 KiB) of a volume spec or agent config\nIs this the right file?`,
    file,
  );
}

function decodeText(bytes: Buffer, name: string, file: string): string {
  const nul = bytes.indexOf(0);
  if (nul !== -1)
    throw new DocumentError(
      `${name} is not a text file: it holds a NUL byte at offset ${nul}\nIs this the right file?`,
      file,
    );
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new DocumentError(
      `${name} is not UTF-8 text\nVolume specs and agent configs are HCL or JSON, in UTF-8.`,
      file,
    );
  }
}

function displayName(file: string): string {
  return file === '-' ? '<stdin>' : file;
}

/**
 * Parses HCL or JSON as Nomad reads its files, with HCL 1 (JSON's reader when the text
 * starts with `{`): a plain object of decoded values. Blocks are lists of objects
 * (`client { }` is `client: [{...}]`, `host_volume "x" { }` is `host_volume: [{x: [{...}]}]`),
 * integers numbers (bigint past 2^53), floats numbers, a repeated key its last value.
 */
export async function parseHclOrJson(text: string, file: string): Promise<Record<string, unknown>> {
  const name = displayName(file);
  const json = text.trimStart().startsWith('{');
  if (nestingDepth(text, json) > MAX_DOCUMENT_DEPTH) {
    throw new DocumentError(
      `${name} is nested more than ${MAX_DOCUMENT_DEPTH} levels deep: dhv refuses it before parsing\nA volume spec or agent config needs three levels at most.`,
      file,
    );
  }
  try {
    return hcl1.goMapToPlain(hcl1.decodeObjectList(hcl1.parseHcl1(text)));
  } catch (err) {
    throw new DocumentError(`${name} is not valid HCL: ${short((err as Error).message)}`, file);
  }
}

/** The first line of a parser's message, cut short: parsers quote the input back, and the input may be huge. */
function short(message: string): string {
  const lines = message.split('\n').filter((l) => l.trim() !== '');
  let first = (lines[0] ?? message).trim();
  if (first.length > MAX_PARSER_MESSAGE) first = `${first.slice(0, MAX_PARSER_MESSAGE)}…`;
  const more = lines.length > 1 ? ` (and ${lines.length - 1} more lines)` : '';
  return `${first}${more}`;
}

/**
 * How deep brackets nest outside strings and comments, scanning once without recursion.
 * An estimate for HCL (heredocs are not followed), exact for JSON; it only has to catch
 * input built to blow a parser's stack.
 */
export function nestingDepth(text: string, json: boolean): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (!json && (c === '#' || (c === '/' && text[i + 1] === '/'))) {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (!json && c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 1;
    } else if (c === '{' || c === '[' || c === '(') {
      depth++;
      if (depth > max) max = depth;
    } else if (c === '}' || c === ']' || c === ')') {
      depth = Math.max(0, depth - 1);
    }
  }
  return max;
}

/** HCL gives a block as an array of bodies and JSON may give a single object: both become a list. */
export function blocks(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

/** Whether a value is one HCL body (an object, not a list or a scalar). */
export function isBody(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Reads an optional string setting; a value that is not a non-empty string is added to `problems`. */
export function nonEmptyText(problems: string[]): (where: string, value: unknown) => string | undefined {
  return (where, value) => {
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value === '') {
      problems.push(`${where} must be a non-empty string`);
      return undefined;
    }
    return value;
  };
}

/** A block that may appear once: the last body wins, as repeated HCL attributes would. */
export function singleBlock(value: unknown): Record<string, unknown> | undefined {
  const list = blocks(value);
  // Entries defined, not assigned: a key `__proto__` stays a key.
  const merged = new Map<string, unknown>();
  for (const body of list) if (isBody(body)) for (const [k, v] of Object.entries(body)) merged.set(k, v);
  return list.length === 0 ? undefined : Object.fromEntries(merged);
}
