/** `text` as one word of a POSIX shell command line, whatever it holds: single-quoted, each `'` closed, escaped and reopened. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}
