import { SUPPORTED, TemplateError, lineOf } from './errors.js';
import { FUNCS, UNSUPPORTED_FUNCS } from './funcs.js';
import { lex, split, type Token } from './lex.js';

export type Operand =
  | { kind: 'field'; path: string[] }
  | { kind: 'const'; value: unknown }
  | { kind: 'func'; name: string }
  | { kind: 'pipe'; pipe: Pipeline; path: string[] };
export interface Command {
  operands: Operand[];
  /** Offset of the command in the template, and its text, for Go's `:line:col: executing "" at <…>`. */
  pos: number;
  source: string;
}
export type Pipeline = Command[];
export type Node =
  | { kind: 'text'; text: string }
  | { kind: 'action'; pipe: Pipeline }
  | { kind: 'if' | 'range' | 'with'; pipe: Pipeline; body: Node[]; otherwise: Node[] };

export function parse(template: string): Node[] {
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
