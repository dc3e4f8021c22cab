import { encodeJson } from '@dhv/sdk';
import { goPrint, goPrintf, goSprint, goSprintln, goTypeName as goType } from './fmt.js';

/**
 * The part of Go's text/template that `nomad volume status -t` users write: text, fields
 * (`{{.Field.Sub}}`, `{{.}}`, `{{(index .List 0).Name}}`), string, number and bool constants,
 * pipelines (`{{.Name | printf "%q"}}`), `if`/`else if`/`else`, `range`, `with`, comments,
 * `{{-`/`-}}` trimming, and the builtins index, len, printf, print, println, eq, ne, lt, le,
 * gt, ge, and, or, not. Anything else (variables, define/template/block, call, html, js,
 * urlquery, slice, Nomad's sprig_* functions) is refused with the construct named, before
 * anything is printed.
 */

export class TemplateError extends Error {
  constructor(
    message: string,
    /** TEMPLATE_UNSUPPORTED: a construct dhv does not implement; TEMPLATE_FAILED: Go's own parse or exec error. */
    readonly code: 'TEMPLATE_UNSUPPORTED' | 'TEMPLATE_FAILED' = 'TEMPLATE_UNSUPPORTED',
  ) {
    super(message);
    this.name = 'TemplateError';
  }
}

type Operand =
  | { kind: 'field'; path: string[] }
  | { kind: 'const'; value: unknown }
  | { kind: 'func'; name: string }
  | { kind: 'pipe'; pipe: Pipeline; path: string[] };
interface Command {
  operands: Operand[];
  /** Offset of the command in the template, and its text, for Go's `:line:col: executing "" at <…>`. */
  pos: number;
  source: string;
}
type Pipeline = Command[];
type Node =
  | { kind: 'text'; text: string }
  | { kind: 'action'; pipe: Pipeline }
  | { kind: 'if' | 'range' | 'with'; pipe: Pipeline; body: Node[]; otherwise: Node[] };

const SUPPORTED =
  'dhv understands fields, constants, pipelines, if/else, range, with, comments and the builtins index, len, printf, print, println, eq, ne, lt, le, gt, ge, and, or, not';
const FUNCS = new Set([
  'index',
  'len',
  'printf',
  'print',
  'println',
  'eq',
  'ne',
  'lt',
  'le',
  'gt',
  'ge',
  'and',
  'or',
  'not',
]);
/** Go's other builtins and Nomad's sprig_* additions: real functions in `nomad … -t`, not implemented here. */
const UNSUPPORTED_FUNCS = new Set(['call', 'html', 'js', 'urlquery', 'slice']);

/** What a template sees: what `--json` prints (bigints as numbers), as Nomad's sees its API structs. */
export function templateData(value: unknown): unknown {
  return JSON.parse(encodeJson(value));
}

/** Renders `template` against `data` (values as `--json` would print them), or throws a TemplateError. */
export function renderGoTemplate(template: string, data: unknown): string {
  return renderGoTemplateParts(template, data).join('');
}

/**
 * The same output in the pieces it was made of, to be written one after another: Go's
 * Execute writes to a buffer without limit, and a template Go renders (a wide `printf` in
 * a `range`) can make more text than one JavaScript string holds.
 */
export function renderGoTemplateParts(template: string, data: unknown): string[] {
  const out: string[] = [];
  new Renderer(template).render(parse(template), data, out);
  return out;
}

interface Token {
  text?: string;
  action?: string;
  /** Offset in the template of the action's first character after `{{` (and any `-`). */
  pos: number;
}

function split(template: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{{', i);
    if (open === -1) {
      tokens.push({ text: template.slice(i), pos: i });
      break;
    }
    let text = template.slice(i, open);
    const close = closingOf(template, open + 2);
    let action = template.slice(open + 2, close);
    let pos = open + 2;
    if (action.startsWith('-') && /\s/.test(action[1] ?? '')) {
      text = text.trimEnd();
      action = action.slice(1);
      pos++;
    }
    let next = close + 2;
    if (action.endsWith('-') && /\s/.test(action[action.length - 2] ?? '')) {
      action = action.slice(0, -1);
      while (next < template.length && /\s/.test(template[next]!)) next++;
    }
    if (text !== '') tokens.push({ text, pos: i });
    const lead = action.length - action.trimStart().length;
    tokens.push({ action: action.trim(), pos: pos + lead });
    i = next;
  }
  return tokens;
}

/** Where the `}}` closing the action that starts at `from` is, skipping quoted strings. */
function closingOf(template: string, from: number): number {
  let quote: string | undefined;
  for (let j = from; j < template.length; j++) {
    const c = template[j]!;
    if (quote) {
      if (c === '\\' && quote !== '`') j++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === '`') quote = c;
    else if (c === '}' && template[j + 1] === '}') return j;
  }
  throw new TemplateError(`template: :${lineOf(template, from)}: unclosed action`, 'TEMPLATE_FAILED');
}

function lineOf(template: string, pos: number): number {
  return 1 + (template.slice(0, pos).match(/\n/g)?.length ?? 0);
}

function parse(template: string): Node[] {
  const tokens = split(template);
  let at = 0;
  const block = (closers: readonly string[]): { nodes: Node[]; closer: Token | undefined } => {
    const nodes: Node[] = [];
    while (at < tokens.length) {
      const token = tokens[at++]!;
      if (token.text !== undefined) {
        nodes.push({ kind: 'text', text: token.text });
        continue;
      }
      const action = token.action!;
      if (action.startsWith('/*') && action.endsWith('*/')) continue;
      const word = /^[a-z]+/.exec(action)?.[0] ?? '';
      if (closers.includes(word)) return { nodes, closer: token };
      if (word === 'if' || word === 'range' || word === 'with') {
        nodes.push(control(word, action.slice(word.length), token.pos + word.length));
        continue;
      }
      if (['define', 'template', 'block', 'break', 'continue'].includes(word) || /^\$|:=/.test(action))
        throw new TemplateError(`template: {{${action}}} is not supported: ${SUPPORTED}`);
      nodes.push({ kind: 'action', pipe: parsePipeline(action, token.pos, template) });
    }
    if (closers.length > 0) throw new TemplateError('template: unexpected EOF', 'TEMPLATE_FAILED');
    return { nodes, closer: undefined };
  };
  const control = (kind: 'if' | 'range' | 'with', rest: string, pos: number): Node => {
    if (/^\s*\$|:=/.test(rest))
      throw new TemplateError(`template: {{${kind}${rest}}} is not supported: variables are not; ${SUPPORTED}`);
    const pipe = parsePipeline(rest, pos, template);
    if (pipe.length === 0)
      throw new TemplateError(`template: :${lineOf(template, pos)}: missing value for ${kind}`, 'TEMPLATE_FAILED');
    const body = block(['end', 'else']);
    let otherwise: Node[] = [];
    if (body.closer?.action === 'else') otherwise = block(['end']).nodes;
    else if (body.closer && body.closer.action !== 'end') {
      // {{else if …}} / {{else with …}}: the rest of the chain is one nested block, closed by the same {{end}}.
      const chained = body.closer.action!.slice('else'.length).trim();
      const word = /^[a-z]+/.exec(chained)?.[0];
      if (word !== kind || kind === 'range')
        throw new TemplateError(`template: {{${body.closer.action}}} is not supported: ${SUPPORTED}`);
      // The nested control takes the {{end}} the whole chain shares.
      otherwise = [control(word, chained.slice(word.length), body.closer.pos + 'else '.length + word.length)];
    }
    return { kind, pipe, body: body.nodes, otherwise };
  };
  return block([]).nodes;
}

type Lexeme =
  | { kind: 'field'; path: string[]; pos: number; glued: boolean }
  | { kind: 'const'; value: unknown; pos: number; glued: boolean }
  | { kind: 'ident'; name: string; pos: number; glued: boolean }
  | { kind: '(' | ')' | '|'; pos: number; glued: boolean };

function lex(source: string, base: number, action: string): Lexeme[] {
  const out: Lexeme[] = [];
  let i = 0;
  while (i < source.length) {
    const glued = i > 0 && !/\s/.test(source[i - 1]!);
    const c = source[i]!;
    const pos = base + i;
    const rest = source.slice(i);
    let m: RegExpExecArray | null;
    if (/\s/.test(c)) i++;
    else if (c === '(' || c === ')' || c === '|') {
      out.push({ kind: c, pos, glued });
      i++;
    } else if ((m = /^"(?:[^"\\]|\\.)*"/.exec(rest))) {
      out.push({ kind: 'const', value: JSON.parse(m[0]) as string, pos, glued });
      i += m[0].length;
    } else if ((m = /^`[^`]*`/.exec(rest))) {
      out.push({ kind: 'const', value: m[0].slice(1, -1), pos, glued });
      i += m[0].length;
    } else if ((m = /^[-+]?(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:e[-+]?\d+)?)(?![\w.])/.exec(rest))) {
      out.push({ kind: 'const', value: Number(m[0]), pos, glued });
      i += m[0].length;
    } else if ((m = /^(?:\.[A-Za-z_][A-Za-z0-9_]*)+/.exec(rest))) {
      out.push({ kind: 'field', path: m[0].slice(1).split('.'), pos, glued });
      i += m[0].length;
    } else if (c === '.') {
      out.push({ kind: 'field', path: [], pos, glued });
      i++;
    } else if ((m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest))) {
      const name = m[0];
      if (name === 'true' || name === 'false') out.push({ kind: 'const', value: name === 'true', pos, glued });
      else if (name === 'nil')
        out.push({ kind: 'const', value: undefined, pos, glued }); // untyped nil, unlike a JSON null
      else out.push({ kind: 'ident', name, pos, glued });
      i += name.length;
    } else throw new TemplateError(`template: {{${action}}} is not supported: ${SUPPORTED}`);
  }
  return out;
}

function parsePipeline(source: string, base: number, template: string): Pipeline {
  const lexemes = lex(source, base, source.trim());
  let at = 0;
  const pipeline = (inParens: boolean): Pipeline => {
    const commands: Command[] = [];
    let operands: Operand[] = [];
    let start = lexemes[at]?.pos ?? base;
    const finish = (end: number) => {
      if (operands.length === 0)
        throw new TemplateError(`template: :${lineOf(template, start)}: missing command`, 'TEMPLATE_FAILED');
      commands.push({ operands, pos: start, source: template.slice(start, end).trim() });
      operands = [];
    };
    while (at < lexemes.length) {
      const lexeme = lexemes[at++]!;
      if (lexeme.kind === ')') {
        if (!inParens)
          throw new TemplateError(`template: :${lineOf(template, lexeme.pos)}: unexpected ")"`, 'TEMPLATE_FAILED');
        finish(lexeme.pos);
        return commands;
      }
      if (lexeme.kind === '|') {
        finish(lexeme.pos);
        start = lexemes[at]?.pos ?? lexeme.pos;
        continue;
      }
      if (lexeme.kind === '(') {
        const inner = pipeline(true);
        const next = lexemes[at];
        let path: string[] = [];
        if (next?.kind === 'field' && next.glued && next.path.length > 0) {
          path = next.path;
          at++;
        }
        operands.push({ kind: 'pipe', pipe: inner, path });
        continue;
      }
      if (lexeme.kind === 'ident') {
        if (!FUNCS.has(lexeme.name)) {
          if (UNSUPPORTED_FUNCS.has(lexeme.name) || lexeme.name.startsWith('sprig_'))
            throw new TemplateError(
              `template: {{${source.trim()}}} is not supported: ${lexeme.name} is not; ${SUPPORTED}`,
            );
          throw new TemplateError(
            `template: :${lineOf(template, lexeme.pos)}: function ${JSON.stringify(lexeme.name)} not defined`,
            'TEMPLATE_FAILED',
          );
        }
        operands.push({ kind: 'func', name: lexeme.name });
        continue;
      }
      if (lexeme.kind === 'field') operands.push({ kind: 'field', path: lexeme.path });
      else if (lexeme.kind === 'const') operands.push({ kind: 'const', value: lexeme.value });
    }
    if (inParens)
      throw new TemplateError(`template: :${lineOf(template, base)}: unclosed left paren`, 'TEMPLATE_FAILED');
    if (operands.length > 0 || commands.length > 0) finish(base + source.length);
    return commands;
  };
  return pipeline(false);
}

/** Go's text/template exec error: where, which command, what. */
class ExecFailure extends Error {}

class Renderer {
  constructor(private readonly template: string) {}

  render(nodes: readonly Node[], dot: unknown, out: string[]): void {
    for (const node of nodes) {
      if (node.kind === 'text') out.push(node.text);
      else if (node.kind === 'action') out.push(goPrint(this.pipeline(node.pipe, dot)));
      else if (node.kind === 'if') {
        this.render(truthy(this.pipeline(node.pipe, dot)) ? node.body : node.otherwise, dot, out);
      } else if (node.kind === 'with') {
        const value = this.pipeline(node.pipe, dot);
        if (truthy(value)) this.render(node.body, value, out);
        else this.render(node.otherwise, dot, out);
      } else {
        const value = this.pipeline(node.pipe, dot);
        const items = Array.isArray(value)
          ? value
          : value && typeof value === 'object'
            ? Object.keys(value)
                .sort()
                .map((k) => (value as Record<string, unknown>)[k])
            : [];
        if (items.length === 0) this.render(node.otherwise, dot, out);
        else for (const item of items) this.render(node.body, item, out);
      }
    }
  }

  private pipeline(pipe: Pipeline, dot: unknown): unknown {
    let piped: { value: unknown } | undefined;
    for (const command of pipe) piped = { value: this.command(command, dot, piped) };
    return piped?.value;
  }

  private command(command: Command, dot: unknown, piped: { value: unknown } | undefined): unknown {
    const first = command.operands[0]!;
    const rest = command.operands.slice(1);
    try {
      if (first.kind === 'func') {
        const args = rest.map((o) => this.operand(o, dot, command));
        if (piped) args.push(piped.value);
        return callBuiltin(first.name, args);
      }
      if (rest.length > 0 || piped) throw new ExecFailure(`can't give argument to non-function ${describe(first)}`);
      return this.operand(first, dot, command);
    } catch (err) {
      if (err instanceof ExecFailure) throw this.failure(command, err.message);
      throw err;
    }
  }

  private operand(operand: Operand, dot: unknown, command: Command): unknown {
    switch (operand.kind) {
      case 'const':
        return operand.value;
      case 'field':
        return lookup(dot, operand.path);
      case 'pipe':
        return lookup(this.pipeline(operand.pipe, dot), operand.path);
      case 'func':
        // A function as an argument is called with no arguments, as in Go.
        try {
          return callBuiltin(operand.name, []);
        } catch (err) {
          if (err instanceof ExecFailure) throw this.failure(command, err.message);
          throw err;
        }
    }
  }

  private failure(command: Command, message: string): TemplateError {
    const before = this.template.slice(0, command.pos);
    const newline = before.lastIndexOf('\n');
    const col = newline === -1 ? command.pos : command.pos - newline - 1;
    const context = command.source.length > 20 ? `${command.source.slice(0, 20)}...` : command.source;
    return new TemplateError(
      `template: :${lineOf(this.template, command.pos)}:${col}: executing "" at <${context}>: ${message}`,
      'TEMPLATE_FAILED',
    );
  }
}

function describe(operand: Operand): string {
  return operand.kind === 'field'
    ? `.${operand.path.join('.')}`
    : operand.kind === 'const'
      ? goPrint(operand.value)
      : '';
}

function lookup(data: unknown, path: readonly string[]): unknown {
  let value = data;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new ExecFailure(`can't evaluate field ${key} in type ${goType(value)}`);
    }
    if (!Object.hasOwn(value, key)) throw new ExecFailure(`can't evaluate field ${key}`);
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function truthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === '' || value === 0) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

function callBuiltin(name: string, args: unknown[]): unknown {
  const wrap = (fn: () => unknown) => {
    try {
      return fn();
    } catch (err) {
      if (err instanceof ExecFailure) throw new ExecFailure(`error calling ${name}: ${err.message}`);
      throw err;
    }
  };
  const arity = (n: number) => {
    if (args.length !== n) throw new ExecFailure(`wrong number of args for ${name}: want ${n} got ${args.length}`);
  };
  const atLeast = (n: number) => {
    if (args.length < n)
      throw new ExecFailure(`wrong number of args for ${name}: want at least ${n} got ${args.length}`);
  };
  switch (name) {
    case 'index':
      atLeast(1);
      return wrap(() => index(args[0], args.slice(1)));
    case 'len':
      arity(1);
      return wrap(() => length(args[0]));
    case 'printf':
      atLeast(1);
      if (typeof args[0] !== 'string')
        throw new ExecFailure(`wrong type for value; expected string; got ${goType(args[0])}`);
      return goPrintf(args[0], args.slice(1));
    case 'print':
      return goSprint(args);
    case 'println':
      return goSprintln(args);
    case 'not':
      arity(1);
      return !truthy(args[0]);
    case 'and':
      atLeast(1);
      return args[
        firstOr(
          args.findIndex((a) => !truthy(a)),
          args.length - 1,
        )
      ];
    case 'or':
      atLeast(1);
      return args[
        firstOr(
          args.findIndex((a) => truthy(a)),
          args.length - 1,
        )
      ];
    case 'eq':
      atLeast(1);
      if (args.length < 2) throw new ExecFailure('error calling eq: missing argument for comparison');
      return wrap(() => args.slice(1).some((b) => compare(args[0], b, true) === 0));
    case 'ne':
      arity(2);
      return wrap(() => compare(args[0], args[1], true) !== 0);
    default: {
      arity(2);
      const order = wrap(() => compare(args[0], args[1], false)) as number;
      return name === 'lt' ? order < 0 : name === 'le' ? order <= 0 : name === 'gt' ? order > 0 : order >= 0;
    }
  }
}

const firstOr = (found: number, otherwise: number) => (found === -1 ? otherwise : found);

/** Go's index: x[i][j]…; a slice wants an int in range, a map any key (a missing one gives the zero value). */
function index(item: unknown, indices: unknown[]): unknown {
  if (item === undefined) throw new ExecFailure('index of untyped nil');
  let value: unknown = item;
  for (const key of indices) {
    if (Array.isArray(value) || typeof value === 'string' || (value === null && typeof key === 'number')) {
      const list: unknown[] | string = Array.isArray(value) || typeof value === 'string' ? value : [];
      if (typeof key !== 'number' || !Number.isInteger(key)) {
        throw new ExecFailure(
          key == null ? 'cannot index slice/array with nil' : `cannot index slice/array with type ${goType(key)}`,
        );
      }
      if (key < 0 || key >= list.length) throw new ExecFailure(`index out of range: ${key}`);
      value = typeof list === 'string' ? list.charCodeAt(key) : list[key];
    } else if (value === null || (typeof value === 'object' && value !== undefined)) {
      const map = (value ?? {}) as Record<string, unknown>;
      if (typeof key !== 'string') throw new ExecFailure(`value has type ${goType(key)}; should be string`);
      value = Object.hasOwn(map, key) ? map[key] : zeroOfValues(map);
    } else {
      throw new ExecFailure(`can't index item of type ${goType(value)}`);
    }
  }
  return value;
}

/** A missing key's zero value: "" in a map of strings (Nomad's Parameters, Meta, Attributes), nil otherwise. */
function zeroOfValues(map: Record<string, unknown>): unknown {
  const values = Object.values(map);
  return values.every((v) => typeof v === 'string') ? '' : null;
}

function length(item: unknown): number {
  if (item === undefined) throw new ExecFailure('len of untyped nil');
  if (item === null) return 0;
  if (typeof item === 'string') return Buffer.byteLength(item);
  if (Array.isArray(item)) return item.length;
  if (typeof item === 'object') return Object.keys(item).length;
  throw new ExecFailure(`len of type ${goType(item)}`);
}

/** Go's basic comparison: numbers with numbers, strings with strings, bools for equality only. */
function compare(a: unknown, b: unknown, equality: boolean): number {
  const kind = (v: unknown) =>
    typeof v === 'number'
      ? 'number'
      : typeof v === 'string'
        ? 'string'
        : typeof v === 'boolean'
          ? 'bool'
          : v === null || v === undefined
            ? 'nil'
            : 'other';
  const ka = kind(a);
  const kb = kind(b);
  if (ka === 'other' || kb === 'other')
    throw new ExecFailure(equality ? 'non-comparable type' : 'invalid type for comparison');
  if (equality && ka === 'nil' && kb === 'nil') return 0;
  if (ka !== kb) throw new ExecFailure('incompatible types for comparison');
  if (!equality && (ka === 'bool' || ka === 'nil')) throw new ExecFailure('invalid type for comparison');
  if (a === b) return 0;
  return (a as number | string) < (b as number | string) ? -1 : 1;
}
