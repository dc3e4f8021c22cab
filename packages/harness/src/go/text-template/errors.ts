/** A template dhv refuses or Go's text/template would fail on, with Go's words. */
export class TemplateError extends Error {
  constructor(
    message: string,
    /** TEMPLATE_UNSUPPORTED: a construct dhv does not implement; TEMPLATE_FAILED: Go's own parse or exec error. */
    readonly code: 'TEMPLATE_UNSUPPORTED' | 'TEMPLATE_FAILED' = 'TEMPLATE_UNSUPPORTED',
  ) {
    super(message);
    this.name = 'TemplateError';
  }
}

/** Go's text/template exec error: where, which command, what. */
export class ExecFailure extends Error {}

export const SUPPORTED =
  'dhv understands fields, constants, pipelines, if/else, range, with, comments and the builtins index, len, printf, print, println, eq, ne, lt, le, gt, ge, and, or, not';

export function lineOf(template: string, pos: number): number {
  return 1 + (template.slice(0, pos).match(/\n/g)?.length ?? 0);
}
