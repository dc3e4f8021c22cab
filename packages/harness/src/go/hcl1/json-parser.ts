import type { ListNode, Literal, Node, ObjectItem, ObjectList, ObjectNode, Position } from './ast.js';
import {
  BRACKETS_AND_COMMA,
  CharReader,
  EOF,
  c,
  digitValue,
  Hcl1SyntaxError,
  isDecimal,
  isDigit,
  isLetter,
  isWhitespace,
  type ScanToken,
  type ScanType,
} from './scanner.js';
import { unquoteGo } from './unquote.js';

const EOF_FOUND = new Error('EOF token found');

/** The tokens of one character that the JSON scanner knows. */
const ONE_CHARACTER = new Map<number, ScanType>([...BRACKETS_AND_COMMA, [c(':'), 'COLON']]);

/**
 * HCL 1's JSON reader (json/parser), lenient where it is lenient: a member after a
 * missing comma ends the object (it and everything after it are dropped), a trailing
 * comma is accepted, text after the root object is ignored, and objects whose members
 * are all objects are flattened into multi-key items, as HCL blocks are.
 */
export function parseHclJson(text: string): ObjectList {
  const parser = new JsonParser(text);
  let root: ObjectNode | undefined;
  let failure: Error | undefined;
  try {
    root = parser.object();
  } catch (err) {
    failure = err as Error;
  }
  const scanError = parser.r.error;
  if (scanError !== undefined) throw new Hcl1SyntaxError(scanError);
  if (failure) {
    if (failure === EOF_FOUND) throw new Hcl1SyntaxError('EOF token found');
    throw new Hcl1SyntaxError(failure.message);
  }
  flatten(root!.list);
  return root!.list;
}

class JsonParser {
  readonly r: CharReader;
  private tok: ScanToken = { type: 'EOF', text: '', pos: { line: 0, column: 0 } };

  constructor(src: string) {
    this.r = new CharReader(src);
  }

  private scan(): ScanToken {
    this.tok = this.scanToken();
    return this.tok;
  }

  object(): ObjectNode {
    const tok = this.scan();
    if (tok.type === 'LBRACE') return this.objectType();
    if (tok.type === 'EOF') throw EOF_FOUND;
    throw new Error(`Expected object, got unknown token: ${goTokenString(tok)}`);
  }

  private objectType(): ObjectNode {
    const pos = this.tok.pos;
    const list: ObjectList = { kind: 'objectList', items: [], pos };
    try {
      for (;;) {
        list.items.push(this.objectItem());
        if (this.scan().type !== 'COMMA') break;
      }
    } catch (err) {
      if (err !== EOF_FOUND && this.tok.type !== 'RBRACE') throw err;
    }
    return { kind: 'object', list, pos };
  }

  private objectItem(): ObjectItem {
    const keys = [];
    for (;;) {
      const tok = this.scan();
      if (tok.type === 'EOF') throw EOF_FOUND;
      if (tok.type === 'STRING') {
        keys.push({ text: tok.text, value: unquoteGo(tok.text) });
        continue;
      }
      if (tok.type === 'COLON' && keys.length > 0) break;
      if (tok.type === 'ILLEGAL') throw new Error('illegal');
      throw new Error(`expected: STRING got: ${tok.type}`);
    }
    return { keys, val: this.objectValue() };
  }

  private objectValue(): Node {
    const tok = this.scan();
    switch (tok.type) {
      case 'NUMBER':
      case 'FLOAT':
      case 'BOOL':
      case 'NULL':
      case 'STRING':
        return this.literal();
      case 'LBRACE':
        return this.objectType();
      case 'LBRACK':
        return this.listType();
      case 'EOF':
        throw EOF_FOUND;
    }
    throw new Error(`Expected object value, got unknown token: ${goTokenString(tok)}`);
  }

  private listType(): ListNode {
    const node: ListNode = { kind: 'list', items: [], pos: this.tok.pos };
    for (;;) {
      const tok = this.scan();
      switch (tok.type) {
        case 'NUMBER':
        case 'FLOAT':
        case 'STRING':
          node.items.push(this.literal());
          break;
        case 'COMMA':
        case 'BOOL': // HCL 1's JSON reader drops booleans in lists,
        case 'LBRACK': // and reads a nested list's items into the outer one.
          break;
        case 'LBRACE':
          node.items.push(this.objectType());
          break;
        case 'RBRACK':
          return node;
        default:
          throw new Error(`unexpected token while parsing list: ${tok.type}`);
      }
    }
  }

  private literal(): Literal {
    const { type, text, pos } = this.tok;
    if (type === 'NULL') return { kind: 'literal', token: { type: 'STRING', text: '', pos } };
    if (type === 'STRING') return { kind: 'literal', token: { type, text, pos, json: true } };
    return { kind: 'literal', token: { type: type as 'NUMBER' | 'FLOAT' | 'BOOL', text, pos } };
  }

  private scanToken(): ScanToken {
    const r = this.r;
    let ch = r.next();
    while (isWhitespace(ch)) ch = r.next();
    const start = r.tokenStart();
    let type: ScanType = 'ILLEGAL';
    if (isLetter(ch)) {
      let next = r.next();
      while (isLetter(next) || isDigit(next) || next === c('-')) next = r.next();
      if (next !== EOF) r.unread();
      const lit = r.src.slice(start.offset, r.offset());
      if (lit === 'true' || lit === 'false') type = 'BOOL';
      else if (lit === 'null') type = 'NULL';
      else r.fail('illegal char');
    } else if (isDecimal(ch)) {
      type = this.scanNumber(ch);
    } else if (ONE_CHARACTER.has(ch)) {
      type = ONE_CHARACTER.get(ch)!;
    } else {
      switch (ch) {
        case EOF:
          type = 'EOF';
          break;
        case c('"'):
          type = 'STRING';
          this.scanString();
          break;
        case c('.'):
          type = 'PERIOD';
          if (isDecimal(r.peek())) {
            type = 'FLOAT';
            r.scanExponent(r.scanMantissa(r.peek()));
          }
          break;
        case c('-'):
          if (isDecimal(r.peek())) type = this.scanNumber(r.next());
          else r.fail('illegal char');
          break;
        default:
          r.fail(`illegal char: ${String.fromCodePoint(ch)}`);
      }
    }
    return { type, text: r.src.slice(start.offset, r.offset()), pos: start.pos };
  }

  private scanNumber(first: number): ScanType {
    const r = this.r;
    const zero = first === c('0');
    const before = r.offset();
    r.scanMantissa(first);
    const ch = r.next();
    if (r.scanFloatTail(ch)) return 'FLOAT';
    if (ch !== EOF) r.unread();
    if (zero && before !== r.offset()) r.fail('numbers cannot start with 0');
    return 'NUMBER';
  }

  private scanString(): void {
    const r = this.r;
    for (;;) {
      const ch = r.next();
      if (ch === c('\n') || ch === EOF) {
        r.fail('literal not terminated');
        return;
      }
      if (ch === c('"')) break;
      if (ch === c('\\')) this.scanEscape();
    }
  }

  private scanEscape(): void {
    const r = this.r;
    const ch = r.next();
    if ('abfnrtv\\"'.includes(String.fromCodePoint(Math.max(ch, 0)))) return;
    const digits = (first: number, base: number, count: number) => {
      let d = first;
      let n = count;
      while (n > 0 && digitValue(d) < base) {
        d = r.next();
        n--;
      }
      if (n > 0) r.fail('illegal char escape');
      r.unread();
    };
    if (ch >= c('0') && ch <= c('7')) digits(ch, 8, 3);
    else if (ch === c('x')) digits(r.next(), 16, 2);
    else if (ch === c('u')) digits(r.next(), 16, 4);
    else if (ch === c('U')) digits(r.next(), 16, 8);
    else r.fail('illegal char escape');
  }
}

function goTokenString(tok: ScanToken): string {
  return `{Type:${tok.type} Pos:{Filename: Offset:0 Line:${tok.pos.line} Column:${tok.pos.column}} Text:${tok.text}}`;
}

/** json/parser's flattenObjects, on every object list of the tree. */
function flatten(list: ObjectList): void {
  const out: ObjectItem[] = [];
  const expand = (item: ObjectItem): void => {
    const val = item.val;
    if (val.kind === 'object' && val.list.items.length > 0 && val.list.items.every((s) => s.val.kind === 'object')) {
      for (const sub of val.list.items) expand({ keys: [...item.keys, ...sub.keys], val: sub.val });
      return;
    }
    if (val.kind === 'list' && val.items.length > 0 && val.items.every((e) => e.kind === 'object')) {
      for (const elem of val.items) expand({ keys: item.keys, val: elem });
      return;
    }
    out.push(item);
  };
  for (const item of list.items) expand(item);
  list.items = out;
  for (const item of out) flattenNode(item.val);
}

function flattenNode(node: Node): void {
  if (node.kind === 'object') flatten(node.list);
  else if (node.kind === 'list') for (const item of node.items) flattenNode(item);
}

export type { Position };
