import type { Position } from './ast.js';

/** An HCL 1 parse error, worded as HCL 1 words it (`At 4:14: illegal octal number`). */
export class Hcl1SyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Hcl1SyntaxError';
  }
}

export const EOF = -1;

export type ScanType =
  | 'EOF'
  | 'ILLEGAL'
  | 'IDENT'
  | 'NUMBER'
  | 'FLOAT'
  | 'BOOL'
  | 'STRING'
  | 'HEREDOC'
  | 'NULL'
  | 'COMMENT'
  | 'LBRACK'
  | 'RBRACK'
  | 'LBRACE'
  | 'RBRACE'
  | 'COMMA'
  | 'PERIOD'
  | 'ASSIGN'
  | 'COLON'
  | 'ADD'
  | 'SUB';

export interface ScanToken {
  type: ScanType;
  text: string;
  pos: Position;
}

/**
 * Reads code points one at a time with the line and column bookkeeping of HCL 1's
 * scanners (columns count code points; an error is placed at the last character read).
 * The HCL and JSON scanners share it.
 */
export class CharReader {
  private readonly chars: number[];
  private readonly offsets: number[];
  private index = 0;
  private line = 1;
  private column = 0;
  private lastLineLen = 0;
  private prev: { line: number; column: number; lastLineLen: number; index: number } | undefined;
  /** The last error the scanner reported: HCL 1 keeps scanning and reports the last one. */
  error: string | undefined;

  constructor(readonly src: string) {
    this.chars = [];
    this.offsets = [];
    let offset = 0;
    for (const ch of src) {
      this.chars.push(ch.codePointAt(0)!);
      this.offsets.push(offset);
      offset += ch.length;
    }
    this.offsets.push(offset);
  }

  next(): number {
    if (this.index >= this.chars.length) {
      this.column++;
      this.index = this.chars.length + 1;
      return EOF;
    }
    this.prev = { line: this.line, column: this.column, lastLineLen: this.lastLineLen, index: this.index };
    const ch = this.chars[this.index++]!;
    this.column++;
    if (ch === 0x0a) {
      this.line++;
      this.lastLineLen = this.column;
      this.column = 0;
    }
    return ch;
  }

  unread(): void {
    if (!this.prev) return;
    this.line = this.prev.line;
    this.column = this.prev.column;
    this.lastLineLen = this.prev.lastLineLen;
    this.index = this.prev.index;
  }

  peek(): number {
    return this.index < this.chars.length ? this.chars[this.index]! : EOF;
  }

  /** Where the next token starts, given its first character was just read. */
  tokenStart(): { pos: Position; offset: number } {
    const pos =
      this.column > 0 ? { line: this.line, column: this.column } : { line: this.line - 1, column: this.lastLineLen };
    return { pos, offset: this.offsets[Math.min(this.index, this.chars.length + 1) - 1] ?? this.src.length };
  }

  /** The source offset (in UTF-16 units) after the last character read. */
  offset(): number {
    return this.offsets[Math.min(this.index, this.chars.length)] ?? this.src.length;
  }

  /** The decimal digits from `first` on (both scanners' scanMantissa): the first character after them, left unread. */
  scanMantissa(first: number): number {
    let ch = first;
    let scanned = false;
    while (isDecimal(ch)) {
      ch = this.next();
      scanned = true;
    }
    if (scanned && ch !== EOF) this.unread();
    return ch;
  }

  /** An exponent if `first` starts one (`e`, `E`, then a sign and digits), as both scanners' scanExponent. */
  scanExponent(first: number): number {
    let ch = first;
    if (ch === c('e') || ch === c('E')) {
      ch = this.next();
      if (ch === c('-') || ch === c('+')) ch = this.next();
      ch = this.scanMantissa(ch);
    }
    return ch;
  }

  /** After an integer's digits, `ch` the next character: whether an exponent or a fraction (and its exponent) follows, read, making the number a FLOAT. */
  scanFloatTail(ch: number): boolean {
    if (ch === c('e') || ch === c('E')) {
      this.scanExponent(ch);
      return true;
    }
    if (ch === c('.')) {
      const after = this.scanMantissa(this.peek());
      if (after === c('e') || after === c('E')) this.scanExponent(this.next());
      return true;
    }
    return false;
  }

  fail(message: string): void {
    let pos: Position;
    if (this.column > 0) pos = { line: this.line, column: this.column };
    else if (this.lastLineLen > 0) pos = { line: this.line - 1, column: this.lastLineLen };
    else pos = { line: 1, column: 1 };
    this.error = `${pos.line}:${pos.column}: ${message}`;
  }
}

export const isLetter = (ch: number): boolean =>
  (ch >= 0x61 && ch <= 0x7a) ||
  (ch >= 0x41 && ch <= 0x5a) ||
  ch === 0x5f ||
  (ch >= 0x80 && /\p{L}/u.test(String.fromCodePoint(ch)));
export const isDigit = (ch: number): boolean =>
  (ch >= 0x30 && ch <= 0x39) || (ch >= 0x80 && /\p{Nd}/u.test(String.fromCodePoint(ch)));
export const isDecimal = (ch: number): boolean => ch >= 0x30 && ch <= 0x39;
export const isHexadecimal = (ch: number): boolean =>
  isDecimal(ch) || (ch >= 0x61 && ch <= 0x66) || (ch >= 0x41 && ch <= 0x46);
export const isWhitespace = (ch: number): boolean => ch === 0x20 || ch === 0x09 || ch === 0x0a || ch === 0x0d;

export function digitValue(ch: number): number {
  if (isDecimal(ch)) return ch - 0x30;
  if (ch >= 0x61 && ch <= 0x66) return ch - 0x61 + 10;
  if (ch >= 0x41 && ch <= 0x46) return ch - 0x41 + 10;
  return 16;
}

export const c = (s: string): number => s.codePointAt(0)!;

/** The one-character tokens both scanners know. */
export const BRACKETS_AND_COMMA: ReadonlyMap<number, ScanType> = new Map([
  [c('['), 'LBRACK'],
  [c(']'), 'RBRACK'],
  [c('{'), 'LBRACE'],
  [c('}'), 'RBRACE'],
  [c(','), 'COMMA'],
]);
