import { Hcl1SyntaxError } from './scanner.js';

/**
 * A quoted HCL 1 string's value (hcl/strconv Unquote): Go's escapes, and `${...}` kept
 * exactly as written, escapes and quotes inside it included. Nomad's CLI never
 * interpolates, so `"${attr.x}"` and `"50%{off}"` are plain text.
 */
export function unquoteHcl(quoted: string): string {
  return unquote(quoted, true);
}

/** A JSON string's value as HCL 1's JSON reader takes it: Go's strconv.Unquote. */
export function unquoteGo(quoted: string): string {
  return unquote(quoted, false);
}

function unquote(quoted: string, hcl: boolean): string {
  if (quoted === '') return '';
  const fail = (): never => {
    throw new Hcl1SyntaxError(`unquote ${quoted} err: invalid syntax`);
  };
  if (quoted.length < 2 || quoted[0] !== '"' || quoted[quoted.length - 1] !== '"') fail();
  let s = quoted.slice(1, -1);
  if (hcl && !s.includes('$') && !s.includes('{') && s.includes('\n')) fail();
  if (!hcl && s.includes('\n')) fail();
  const bytes: number[] = [];
  const pushText = (text: string) => bytes.push(...Buffer.from(text, 'utf8'));
  while (s.length > 0) {
    if (hcl && s.startsWith('${')) {
      let braces = 1;
      let i = 2;
      for (; i < s.length && braces > 0; i++) {
        if (s[i] === '{') braces++;
        else if (s[i] === '}') braces--;
      }
      if (braces !== 0) fail();
      pushText(s.slice(0, i));
      s = s.slice(i);
      continue;
    }
    if (s[0] === '\n' && hcl) fail();
    if (s[0] === '"') fail();
    if (s[0] !== '\\') {
      const ch = String.fromCodePoint(s.codePointAt(0)!);
      pushText(ch);
      s = s.slice(ch.length);
      continue;
    }
    if (s.length <= 1) fail();
    const e = s[1]!;
    s = s.slice(2);
    const simple: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92, '"': 34 };
    if (simple[e] !== undefined) {
      bytes.push(simple[e]);
    } else if (e === 'x' || e === 'u' || e === 'U') {
      const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = s.slice(0, n);
      if (hex.length < n || !/^[0-9a-fA-F]+$/.test(hex)) fail();
      s = s.slice(n);
      const v = parseInt(hex, 16);
      if (e === 'x') bytes.push(v);
      else {
        if (v > 0x10ffff) fail();
        // Go writes a surrogate or other invalid code point as U+FFFD.
        pushText(v >= 0xd800 && v <= 0xdfff ? '\ufffd' : String.fromCodePoint(v));
      }
    } else if (e >= '0' && e <= '7') {
      const digits = e + s.slice(0, 2);
      if (!/^[0-7]{3}$/.test(digits)) fail();
      s = s.slice(2);
      const v = parseInt(digits, 8);
      if (v > 255) fail();
      bytes.push(v);
    } else fail();
  }
  return new TextDecoder('utf-8').decode(Uint8Array.from(bytes));
}

/** A heredoc's value (HCL 1's unindentHeredoc): `<<-` strips the closing line's indent from every line when all share it. */
export function heredocValue(text: string): string {
  const idx = text.indexOf('\n');
  if (idx === -1) throw new Hcl1SyntaxError('heredoc does not contain a newline');
  if (text[2] !== '-') return text.slice(idx + 1, text.length - idx + 1);
  const lines = text.slice(idx + 1, text.length - idx + 2).split('\n');
  const prefix = lines[lines.length - 1]!;
  if (!lines.every((line) => line.startsWith(prefix))) {
    return text.slice(idx + 1, text.length - idx + 1).replace(/[ \t]+$/, '');
  }
  return lines.map((line, k) => (k === lines.length - 1 ? '' : line.slice(prefix.length))).join('\n');
}
