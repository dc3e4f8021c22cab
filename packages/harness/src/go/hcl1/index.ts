/**
 * HCL 1 as Nomad reads volume specs and agent configs (github.com/hashicorp/hcl
 * v1.0.1-nomad-1): the syntax tree, its JSON reader, and DecodeObject into
 * `map[string]interface{}`.
 */
import type { ObjectList } from './ast.js';
import { parseHcl } from './hcl-parser.js';
import { parseHclJson } from './json-parser.js';

export * from './ast.js';
export { Hcl1SyntaxError } from './scanner.js';
export * from './decode.js';

/** hcl.Parse: the JSON reader when the first non-space character is `{` (Go's unicode.IsSpace; a BOM is not space), HCL otherwise. */
export function parseHcl1(text: string): ObjectList {
  const first = /^[\s\u0085]*(.)/su.exec(text)?.[1];
  return first === '{' && !/^[\s\u0085]*\ufeff/u.test(text) ? parseHclJson(text) : parseHcl(text);
}
