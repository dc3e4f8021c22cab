/**
 * Errors joined as Nomad joins them (go-multierror): one error is returned alone, more
 * read `N errors occurred:` with one `\t* ` line each. The first error's code is kept.
 */
export function joinErrors(errors: readonly unknown[]): Error & { code?: string } {
  const list = errors.map((e) => (e instanceof Error ? e : new Error(String(e))));
  if (list.length === 1) return list[0]!;
  const message = `${list.length} errors occurred:\n${list.map((e) => `\t* ${e.message}`).join('\n')}\n\n`;
  const code = (list[0] as { code?: string }).code;
  return Object.assign(new Error(message), code ? { code } : {}, { errors: list });
}
