/**
 * Nomad's CLI spells every flag with one dash (`-detach`, `-node-pool=x`); oclif reads
 * `-detach` as the letters d, e, t, a, c, h. This rewrites a one-dash spelling of a flag
 * the command has (longer than one letter) to its two-dash form, so both spellings work
 * (DESIGN.md, "The dhv command contract"). Arguments after `--`, `-` (stdin) and
 * one-letter flags such as `-t` are left alone.
 */
export function nomadSpelling(argv: readonly string[], flags: Readonly<Record<string, unknown>>): string[] {
  const names = new Set(Object.keys(flags).filter((name) => name.length > 1));
  const out: string[] = [];
  let rest = false;
  for (const arg of argv) {
    if (rest || arg === '--') {
      rest = true;
      out.push(arg);
      continue;
    }
    const match = /^-([a-z][a-z0-9-]+)(=.*)?$/s.exec(arg);
    out.push(match && names.has(match[1]!) ? `-${arg}` : arg);
  }
  return out;
}
