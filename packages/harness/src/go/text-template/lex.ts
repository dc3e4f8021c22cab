import { SUPPORTED, TemplateError, lineOf } from './errors.js';

export interface Token {
  text?: string;
  action?: string;
  /** Offset in the template of the action's first character after `{{` (and any `-`). */
  pos: number;
}

export function split(template: string): Token[] {
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

export type Lexeme =
  | { kind: 'field'; path: string[]; pos: number; glued: boolean }
  | { kind: 'const'; value: unknown; pos: number; glued: boolean }
  | { kind: 'ident'; name: string; pos: number; glued: boolean }
  | { kind: '(' | ')' | '|'; pos: number; glued: boolean };

export function lex(source: string, base: number, action: string): Lexeme[] {
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
