/**
 * The syntax tree HCL 1 (github.com/hashicorp/hcl, v1, Nomad's fork) builds, for both its
 * HCL and its JSON reader. Nomad's CLI works on this tree, not on decoded values: a
 * capacity is read from a literal's own text, and blocks are picked out by key.
 */

export type TokenType = 'NUMBER' | 'FLOAT' | 'BOOL' | 'STRING' | 'HEREDOC';

export interface Position {
  line: number;
  column: number;
}

export interface LiteralToken {
  type: TokenType;
  /** The literal exactly as written (quotes and escapes included). */
  text: string;
  /** A string from the JSON reader, unquoted by Go's rules rather than HCL's. */
  json?: boolean;
  pos: Position;
}

export interface Literal {
  kind: 'literal';
  token: LiteralToken;
}

export interface ListNode {
  kind: 'list';
  items: Node[];
  pos: Position;
}

export interface ObjectNode {
  kind: 'object';
  list: ObjectList;
  pos: Position;
}

export interface ObjectKey {
  /** The key as written: an identifier, or a quoted string. */
  text: string;
  /** The key's value (a quoted key unquoted). */
  value: string;
}

export interface ObjectItem {
  keys: ObjectKey[];
  val: Node;
}

export interface ObjectList {
  kind: 'objectList';
  items: ObjectItem[];
  pos: Position;
}

export type Node = Literal | ListNode | ObjectNode | ObjectList;

/** HCL 1's ObjectList.Filter: the items whose leading keys match (case-insensitively), with those keys taken off. */
export function filterItems(list: ObjectList, ...keys: string[]): ObjectList {
  const items: ObjectItem[] = [];
  for (const item of list.items) {
    if (item.keys.length < keys.length) continue;
    const match = keys.every((key, i) => {
      const k = item.keys[i]!.value;
      return k === key || equalFold(k, key);
    });
    if (match) items.push({ keys: item.keys.slice(keys.length), val: item.val });
  }
  return { kind: 'objectList', items, pos: list.pos };
}

/** ObjectList.Elem: the items without keys left (after a filter: the `key = value` and `key { }` forms). */
export function elemItems(list: ObjectList): ObjectList {
  return { kind: 'objectList', items: list.items.filter((i) => i.keys.length === 0), pos: list.pos };
}

/** Go's strings.EqualFold, close enough for keys: Unicode simple case folding. */
export function equalFold(a: string, b: string): boolean {
  return a.length === b.length ? a.toLowerCase() === b.toLowerCase() || a.toUpperCase() === b.toUpperCase() : false;
}

export function nodePos(node: Node): Position {
  return node.kind === 'literal' ? node.token.pos : node.pos;
}

/** The Go type name HCL 1 and mapstructure print for a node (`*ast.LiteralType`). */
export function goNodeType(node: Node): string {
  switch (node.kind) {
    case 'literal':
      return '*ast.LiteralType';
    case 'list':
      return '*ast.ListType';
    case 'object':
      return '*ast.ObjectType';
    case 'objectList':
      return '*ast.ObjectList';
  }
}
