/**
 * The part of Go's text/template that `nomad volume status -t` users write: text, fields
 * (`{{.Field.Sub}}`, `{{.}}`, `{{(index .List 0).Name}}`), string, number and bool constants,
 * pipelines (`{{.Name | printf "%q"}}`), `if`/`else if`/`else`, `range`, `with`, comments,
 * `{{-`/`-}}` trimming, and the builtins index, len, printf, print, println, eq, ne, lt, le,
 * gt, ge, and, or, not. Anything else (variables, define/template/block, call, html, js,
 * urlquery, slice, Nomad's sprig_* functions) is refused with the construct named, before
 * anything is printed.
 */
import { encodeJson } from '@dhv/sdk';
import { Renderer } from './exec.js';
import { parse } from './parse.js';

export { TemplateError } from './errors.js';

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
