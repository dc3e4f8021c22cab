import {
  BRACKETS_AND_COMMA,
  CharReader,
  EOF,
  c,
  digitValue,
  isDecimal,
  isDigit,
  isHexadecimal,
  isLetter,
  isWhitespace,
  type ScanToken,
  type ScanType,
} from './scanner.js';

/** The tokens of one character that HCL's scanner knows. */
const ONE_CHARACTER = new Map<number, ScanType>([...BRACKETS_AND_COMMA, [c('='), 'ASSIGN'], [c('+'), 'ADD']]);

/** HCL 1's HCL scanner (hcl/scanner): its tokens, and its errors at its positions. */
export class HclScanner {
  readonly r: CharReader;

  constructor(src: string) {
    this.r = new CharReader(src);
  }

  scan(): ScanToken {
    const r = this.r;
    let ch = r.next();
    while (isWhitespace(ch)) ch = r.next();
    const start = r.tokenStart();
    let type: ScanType = 'ILLEGAL';
    if (isLetter(ch)) {
      const lit = this.scanIdentifier(start.offset);
      type = lit === 'true' || lit === 'false' ? 'BOOL' : 'IDENT';
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
        case c('#'):
        case c('/'):
          type = 'COMMENT';
          this.scanComment(ch);
          break;
        case c('.'):
          type = 'PERIOD';
          if (isDecimal(r.peek())) {
            type = 'FLOAT';
            ch = r.scanMantissa(r.peek());
            r.scanExponent(ch);
          }
          break;
        case c('<'):
          type = 'HEREDOC';
          this.scanHeredoc();
          break;
        case c('-'):
          if (isDecimal(r.peek())) type = this.scanNumber(r.next());
          else type = 'SUB';
          break;
        default:
          r.fail('illegal char');
      }
    }
    return { type, text: r.src.slice(start.offset, r.offset()), pos: start.pos };
  }

  private scanComment(first: number): void {
    const r = this.r;
    let ch = first;
    if (ch === c('#') || (ch === c('/') && r.peek() !== c('*'))) {
      if (ch === c('/') && r.peek() !== c('/')) {
        r.fail("expected '/' for comment");
        return;
      }
      ch = r.next();
      while (ch !== c('\n') && ch !== EOF) ch = r.next();
      if (ch !== EOF) r.unread();
      return;
    }
    r.next();
    ch = r.next();
    for (;;) {
      if (ch === EOF) {
        r.fail('comment not terminated');
        break;
      }
      const ch0 = ch;
      ch = r.next();
      if (ch0 === c('*') && ch === c('/')) break;
    }
  }

  private scanNumber(first: number): ScanType {
    const r = this.r;
    let ch = first;
    if (ch === c('0')) {
      ch = r.next();
      if (ch === c('x') || ch === c('X')) {
        ch = r.next();
        let found = false;
        while (isHexadecimal(ch)) {
          ch = r.next();
          found = true;
        }
        if (!found) r.fail('illegal hexadecimal number');
        if (ch !== EOF) r.unread();
        return 'NUMBER';
      }
      let illegalOctal = false;
      while (isDecimal(ch)) {
        ch = r.next();
        if (ch === c('8') || ch === c('9')) illegalOctal = true;
      }
      if (r.scanFloatTail(ch)) return 'FLOAT';
      if (illegalOctal) r.fail('illegal octal number');
      if (ch !== EOF) r.unread();
      return 'NUMBER';
    }
    r.scanMantissa(ch);
    ch = r.next();
    if (r.scanFloatTail(ch)) return 'FLOAT';
    if (ch !== EOF) r.unread();
    return 'NUMBER';
  }

  private scanHeredoc(): void {
    const r = this.r;
    if (r.next() !== c('<')) {
      r.fail("heredoc expected second '<', didn't see it");
      return;
    }
    const anchorStart = r.offset();
    let ch = r.next();
    if (ch === c('-')) ch = r.next();
    while (isLetter(ch) || isDigit(ch)) ch = r.next();
    if (ch === EOF) {
      r.fail('heredoc not terminated');
      return;
    }
    if (ch === c('\r') && r.peek() === c('\n')) ch = r.next();
    if (ch !== c('\n')) {
      r.fail('invalid characters in heredoc anchor');
      return;
    }
    let anchor = r.src.slice(anchorStart, r.offset() - 1);
    if (anchor.endsWith('\r')) anchor = anchor.slice(0, -1);
    if (anchor === '' || anchor === '-') {
      r.fail('zero-length heredoc anchor');
      return;
    }
    const ident = anchor.startsWith('-') ? anchor.slice(1) : anchor;
    const closing = new RegExp(`^[\\t\\n\\v\\f\\r ]*${ident}\\r*$`);
    let lineStart = r.offset();
    for (;;) {
      const next = r.next();
      if (next === c('\n')) {
        const line = r.src.slice(lineStart, r.offset() - 1);
        if (line.length >= anchor.length && closing.test(line)) break;
        lineStart = r.offset();
      }
      if (next === EOF) {
        r.fail('heredoc not terminated');
        return;
      }
    }
  }

  private scanString(): void {
    const r = this.r;
    let braces = 0;
    for (;;) {
      const ch = r.next();
      if ((ch === c('\n') && braces === 0) || ch === EOF) {
        r.fail('literal not terminated');
        return;
      }
      if (ch === c('"') && braces === 0) break;
      if (braces === 0 && ch === c('$') && r.peek() === c('{')) {
        braces++;
        r.next();
      } else if (braces > 0 && ch === c('{')) {
        braces++;
      }
      if (braces > 0 && ch === c('}')) braces--;
      if (ch === c('\\')) this.scanEscape();
    }
  }

  private scanEscape(): void {
    const r = this.r;
    const ch = r.next();
    if ('abfnrtv\\"'.includes(String.fromCodePoint(Math.max(ch, 0)))) return;
    if (ch >= c('0') && ch <= c('7')) this.scanDigits(ch, 8, 3);
    else if (ch === c('x')) this.scanDigits(r.next(), 16, 2);
    else if (ch === c('u')) this.scanDigits(r.next(), 16, 4);
    else if (ch === c('U')) this.scanDigits(r.next(), 16, 8);
    else r.fail('illegal char escape');
  }

  private scanDigits(first: number, base: number, count: number): void {
    let ch = first;
    let n = count;
    while (n > 0 && digitValue(ch) < base) {
      ch = this.r.next();
      if (ch === EOF) break;
      n--;
    }
    if (n > 0) this.r.fail('illegal char escape');
    if (n !== count && ch !== EOF) this.r.unread();
  }

  private scanIdentifier(startOffset: number): string {
    const r = this.r;
    let ch = r.next();
    while (isLetter(ch) || isDigit(ch) || ch === c('-') || ch === c('.')) ch = r.next();
    if (ch !== EOF) r.unread();
    return r.src.slice(startOffset, r.offset());
  }
}
