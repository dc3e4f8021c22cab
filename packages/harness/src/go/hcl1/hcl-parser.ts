import type { ListNode, Literal, Node, ObjectItem, ObjectKey, ObjectList, ObjectNode, Position } from './ast.js';
import { HclScanner } from './hcl-scanner.js';
import { Hcl1SyntaxError, type ScanToken } from './scanner.js';
import { unquoteHcl } from './unquote.js';

class PosError extends Error {
  constructor(pos: Position, message: string) {
    super(`At ${pos.line}:${pos.column}: ${message}`);
  }
}

const EOF_FOUND = new Error('EOF token found');

/** HCL 1's HCL parser (hcl/parser): the same tree, the same errors. Comments are skipped. */
export function parseHcl(text: string): ObjectList {
  const parser = new HclParser(text.replaceAll('\r\n', '\n'));
  let list: ObjectList | undefined;
  let failure: Error | undefined;
  try {
    list = parser.objectList(false);
  } catch (err) {
    failure = err as Error;
  }
  const scanError = parser.sc.r.error;
  if (scanError !== undefined) throw new Hcl1SyntaxError(`At ${scanError}`);
  if (failure) {
    if (failure instanceof PosError) throw new Hcl1SyntaxError(failure.message);
    throw failure;
  }
  return list!;
}

class HclParser {
  readonly sc: HclScanner;
  private tok: ScanToken = { type: 'EOF', text: '', pos: { line: 0, column: 0 } };
  private buffered = false;

  constructor(src: string) {
    this.sc = new HclScanner(src);
  }

  private scan(): ScanToken {
    if (this.buffered) {
      this.buffered = false;
      return this.tok;
    }
    do this.tok = this.sc.scan();
    while (this.tok.type === 'COMMENT');
    return this.tok;
  }

  private unscan(): void {
    this.buffered = true;
  }

  objectList(inObject: boolean): ObjectList {
    const node: ObjectList = { kind: 'objectList', items: [], pos: { line: 0, column: 0 } };
    for (;;) {
      if (inObject) {
        const tok = this.scan();
        this.unscan();
        if (tok.type === 'RBRACE') break;
      }
      let item: ObjectItem;
      try {
        item = this.objectItem();
      } catch (err) {
        if (err === EOF_FOUND) break;
        (err as { partial?: ObjectList }).partial = node;
        throw err;
      }
      node.items.push(item);
      const tok = this.scan();
      if (tok.type !== 'COMMA') this.unscan();
    }
    return node;
  }

  private objectItem(): ObjectItem {
    let keys: ObjectKey[];
    try {
      keys = this.objectKey();
    } catch (err) {
      const partial = (err as { keys?: ObjectKey[] }).keys ?? [];
      if (partial.length > 0 && err === EOF_FOUND) throw err;
      if (partial.length > 0 && this.tok.type === 'RBRACE') {
        // HCL 1 treats a key cut short by a closing brace as the end of the object.
        this.tok = { ...this.tok, type: 'EOF' };
        keys = partial;
      } else throw err;
    }
    const item: ObjectItem = { keys, val: undefined as unknown as Node };
    switch (this.tok.type) {
      case 'ASSIGN':
        item.val = this.object();
        break;
      case 'LBRACE':
        item.val = this.objectType();
        break;
      default:
        throw new PosError(
          this.tok.pos,
          `key '${keys.map((k) => k.text).join(' ')}' expected start of object ('{') or assignment ('=')`,
        );
    }
    return item;
  }

  private objectKey(): ObjectKey[] {
    const keys: ObjectKey[] = [];
    const fail = (err: Error) => Object.assign(err, { keys });
    for (;;) {
      const tok = this.scan();
      switch (tok.type) {
        case 'EOF':
          if (keys.length > 0) return keys;
          throw EOF_FOUND;
        case 'ASSIGN':
          if (keys.length > 1) throw fail(new PosError(tok.pos, `nested object expected: LBRACE got: ${tok.type}`));
          if (keys.length === 0) throw fail(new PosError(tok.pos, 'no object keys found!'));
          return keys;
        case 'LBRACE':
          if (keys.length === 0) throw fail(new PosError(tok.pos, `expected: IDENT | STRING got: ${tok.type}`));
          return keys;
        case 'IDENT':
        case 'STRING':
          keys.push({ text: tok.text, value: tok.type === 'STRING' ? unquoteHcl(tok.text) : tok.text });
          break;
        case 'ILLEGAL':
          throw fail(new PosError(tok.pos, 'illegal character'));
        default:
          throw fail(new PosError(tok.pos, `expected: IDENT | STRING | ASSIGN | LBRACE got: ${tok.type}`));
      }
    }
  }

  private object(): Node {
    const tok = this.scan();
    switch (tok.type) {
      case 'NUMBER':
      case 'FLOAT':
      case 'BOOL':
      case 'STRING':
      case 'HEREDOC':
        return this.literal();
      case 'LBRACE':
        return this.objectType();
      case 'LBRACK':
        return this.listType();
      case 'EOF':
        throw EOF_FOUND;
    }
    throw new PosError(tok.pos, `Unknown token: ${goTokenString(tok)}`);
  }

  private objectType(): ObjectNode {
    const pos = this.tok.pos;
    let list: ObjectList;
    try {
      list = this.objectList(true);
    } catch (err) {
      if (this.tok.type !== 'RBRACE') throw err;
      list = (err as { partial?: ObjectList }).partial ?? { kind: 'objectList', items: [], pos };
    }
    const tok = this.scan();
    if (tok.type !== 'RBRACE') throw new PosError(tok.pos, `object expected closing RBRACE got: ${tok.type}`);
    return { kind: 'object', list: { ...list, pos }, pos };
  }

  private listType(): ListNode {
    const node: ListNode = { kind: 'list', items: [], pos: this.tok.pos };
    let needComma = false;
    for (;;) {
      const tok = this.scan();
      if (needComma && tok.type !== 'COMMA' && tok.type !== 'RBRACK') {
        throw new PosError(tok.pos, `error parsing list, expected comma or list end, got: ${tok.type}`);
      }
      switch (tok.type) {
        case 'BOOL':
        case 'NUMBER':
        case 'FLOAT':
        case 'STRING':
        case 'HEREDOC':
          node.items.push(this.literal());
          needComma = true;
          break;
        case 'COMMA':
          needComma = false;
          break;
        case 'LBRACE':
          try {
            node.items.push(this.objectType());
          } catch (err) {
            throw new PosError(tok.pos, `error while trying to parse object within list: ${(err as Error).message}`);
          }
          needComma = true;
          break;
        case 'LBRACK':
          try {
            node.items.push(this.listType());
          } catch (err) {
            throw new PosError(tok.pos, `error while trying to parse list within list: ${(err as Error).message}`);
          }
          break;
        case 'RBRACK':
          return node;
        default:
          throw new PosError(tok.pos, `unexpected token while parsing list: ${tok.type}`);
      }
    }
  }

  private literal(): Literal {
    const { type, text, pos } = this.tok;
    return { kind: 'literal', token: { type: type as Literal['token']['type'], text, pos } };
  }
}

/** Go's `%+v` of a token, as HCL 1's "Unknown token" error prints it. */
function goTokenString(tok: ScanToken): string {
  return `{Type:${tok.type} Pos:{Filename: Offset:0 Line:${tok.pos.line} Column:${tok.pos.column}} Text:${tok.text} JSON:false}`;
}
