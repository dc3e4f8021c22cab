import { encodeJson } from '@dhv/sdk';

/**
 * The part of Go's text/template that `nomad volume status -t` users write: text,
 * `{{.Field.Sub}}` and `{{.}}`, string constants (`{{"\\n"}}`), `{{range .F}} ... {{end}}`,
 * `{{if .F}} ... {{else}} ... {{end}}`, comments and `{{-`/`-}}` trimming. Anything else
 * is refused with the construct named, before anything is printed.
 */

export class TemplateError extends Error {
  readonly code = 'TEMPLATE_UNSUPPORTED';
  constructor(message: string) {
    super(message);
    this.name = 'TemplateError';
  }
}

type Node =
  | { kind: 'text'; text: string }
  | { kind: 'field'; path: string[] }
  | { kind: 'range'; path: string[]; body: Node[]; otherwise: Node[] }
  | { kind: 'if'; path: string[]; body: Node[]; otherwise: Node[] };

const SUPPORTED =
  'dhv understands {{.Field}}, {{"text"}}, {{range .Field}}...{{end}}, {{if .Field}}...{{else}}...{{end}} and comments';

/** What a template sees: what `--json` prints (bigints as numbers), as Nomad's sees its API structs. */
export function templateData(value: unknown): unknown {
  return JSON.parse(encodeJson(value));
}

/** Renders `template` against `data` (values as `--json` would print them), or throws a TemplateError. */
export function renderGoTemplate(template: string, data: unknown): string {
  return render(parse(template), data);
}

function parse(template: string): Node[] {
  const tokens: Array<{ text: string } | { action: string }> = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{{', i);
    if (open === -1) {
      tokens.push({ text: template.slice(i) });
      break;
    }
    let text = template.slice(i, open);
    const close = template.indexOf('}}', open + 2);
    if (close === -1) throw new TemplateError(`template: unclosed action at offset ${open}`);
    let action = template.slice(open + 2, close);
    if (action.startsWith('-') && /\s/.test(action[1] ?? '')) {
      text = text.trimEnd();
      action = action.slice(1);
    }
    let next = close + 2;
    if (action.endsWith('-') && /\s/.test(action[action.length - 2] ?? '')) {
      action = action.slice(0, -1);
      while (next < template.length && /\s/.test(template[next]!)) next++;
    }
    if (text !== '') tokens.push({ text });
    tokens.push({ action: action.trim() });
    i = next;
  }

  let pos = 0;
  const block = (closers: readonly string[]): { nodes: Node[]; closer: string } => {
    const nodes: Node[] = [];
    while (pos < tokens.length) {
      const token = tokens[pos++]!;
      if ('text' in token) {
        nodes.push({ kind: 'text', text: token.text });
        continue;
      }
      const action = token.action;
      if (action.startsWith('/*') && action.endsWith('*/')) continue;
      if (closers.includes(action)) return { nodes, closer: action };
      if (/^"(?:[^"\\]|\\.)*"$/.test(action)) {
        nodes.push({ kind: 'text', text: JSON.parse(action) as string });
        continue;
      }
      const [word, ...args] = action.split(/\s+/);
      if (word === 'range' || word === 'if') {
        const path = fieldPath(args.join(' '), action);
        const body = block(['end', 'else']);
        const otherwise = body.closer === 'else' ? block(['end']).nodes : [];
        nodes.push({ kind: word, path, body: body.nodes, otherwise });
        continue;
      }
      nodes.push({ kind: 'field', path: fieldPath(action, action) });
    }
    if (closers.length > 0) throw new TemplateError(`template: unexpected EOF: a {{${closers[0]}}} is missing`);
    return { nodes, closer: '' };
  };
  return block([]).nodes;
}

function fieldPath(expression: string, action: string): string[] {
  if (expression === '.') return [];
  if (/^(\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(expression)) return expression.slice(1).split('.');
  throw new TemplateError(`template: {{${action}}} is not supported: ${SUPPORTED}`);
}

function lookup(data: unknown, path: readonly string[]): unknown {
  let value = data;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new TemplateError(`template: can't evaluate field ${key} in type ${goType(value)}`);
    }
    if (!(key in value)) throw new TemplateError(`template: can't evaluate field ${key}`);
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function truthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === '' || value === 0 || value === 0n)
    return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

function render(nodes: readonly Node[], data: unknown): string {
  let out = '';
  for (const node of nodes) {
    if (node.kind === 'text') out += node.text;
    else if (node.kind === 'field') out += goPrint(lookup(data, node.path));
    else if (node.kind === 'if') out += render(truthy(lookup(data, node.path)) ? node.body : node.otherwise, data);
    else {
      const value = lookup(data, node.path);
      const items = Array.isArray(value)
        ? value
        : value && typeof value === 'object'
          ? Object.keys(value)
              .sort()
              .map((k) => (value as Record<string, unknown>)[k])
          : [];
      out += items.length === 0 ? render(node.otherwise, data) : items.map((item) => render(node.body, item)).join('');
    }
  }
  return out;
}

/** How Go's fmt prints a value with %v. */
function goPrint(value: unknown): string {
  if (value === null || value === undefined) return '<no value>';
  if (Array.isArray(value)) return `[${value.map(goPrint).join(' ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return `map[${entries
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => `${k}:${goPrint(v)}`)
      .join(' ')}]`;
  }
  return String(value);
}

function goType(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'bigint' || typeof value === 'number') return 'int64';
  if (typeof value === 'boolean') return 'bool';
  return Array.isArray(value) ? 'slice' : 'map';
}
