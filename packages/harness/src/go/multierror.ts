/**
 * hashicorp/go-multierror, as Nomad prints it: the one place dhv writes `N errors occurred:`
 * (test/go-homes.test.ts keeps it so).
 */

/** go-multierror's ListFormatFunc: `1 error occurred:` or `N errors occurred:`, a `\t* ` line each, then a blank line. */
export function multierrorText(messages: readonly string[]): string {
  const head = messages.length === 1 ? '1 error occurred:' : `${messages.length} errors occurred:`;
  return `${head}\n${messages.map((m) => `\t* ${m}`).join('\n')}\n\n`;
}

/**
 * Errors joined as Nomad joins them: one error is returned alone, more as one error with
 * go-multierror's text. The first error's code is kept.
 */
export function joinErrors(errors: readonly unknown[]): Error & { code?: string } {
  const list = errors.map((e) => (e instanceof Error ? e : new Error(String(e))));
  if (list.length === 1) return list[0]!;
  const message = multierrorText(list.map((e) => e.message));
  const code = (list[0] as { code?: string }).code;
  return Object.assign(new Error(message), code ? { code } : {}, { errors: list });
}
