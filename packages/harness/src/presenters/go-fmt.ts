import { goQuote } from '@dhv/sdk/client';

/**
 * Go's fmt for the values a template sees (what `--json` prints: strings, numbers, bools,
 * null, lists, objects): %v, Sprint, Sprintln and the common Printf verbs.
 */

/** How text/template prints an action's value: fmt's %v, with a nil value as `<no value>`. */
export function goPrint(value: unknown): string {
  return value === null || value === undefined ? '<no value>' : formatV(value);
}

function formatV(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(formatV).join(' ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return `map[${entries
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => `${k}:${formatV(v)}`)
      .join(' ')}]`;
  }
  if (typeof value === 'number') return formatNumber(value);
  return String(value);
}

/** A whole number is an int64 in Nomad's structs: its digits. Any other is a float64: %v is its shortest %g. */
function formatNumber(n: number): string {
  return Number.isInteger(n) && Math.abs(n) < 1e21 ? String(n) : formatG(n);
}

/** fmt.Sprint: operands side by side, a space between two that are both not strings. */
export function goSprint(args: readonly unknown[]): string {
  let out = '';
  args.forEach((arg, i) => {
    if (i > 0 && typeof arg !== 'string' && typeof args[i - 1] !== 'string') out += ' ';
    out += formatV(arg);
  });
  return out;
}

/** fmt.Sprintln: operands with a space between each, then a newline. */
export function goSprintln(args: readonly unknown[]): string {
  return `${args.map(formatV).join(' ')}\n`;
}

const VERB = /%([-+# 0]*)(\d+)?(?:\.(\d+))?([a-zA-Z%])/g;

/** fmt.Sprintf with the verbs templates use: v s d q t x X f e g c, flags, width and precision; Go's %!verb(...) on a mismatch. */
export function goPrintf(format: string, args: readonly unknown[]): string {
  let next = 0;
  const out = format.replace(
    VERB,
    (whole, flags: string, width: string | undefined, precision: string | undefined, verb: string) => {
      if (verb === '%') return '%';
      if (next >= args.length) return `%!${verb}(MISSING)`;
      const arg = args[next++];
      const text = formatVerb(verb, arg, flags, precision === undefined ? undefined : Number(precision));
      return pad(text, flags, width === undefined ? 0 : Number(width), verb);
    },
  );
  if (next < args.length) {
    const extra = args.slice(next).map((a) => `${goTypeName(a)}=${formatV(a)}`);
    return `${out}%!(EXTRA ${extra.join(', ')})`;
  }
  return out;
}

function formatVerb(verb: string, arg: unknown, flags: string, precision: number | undefined): string {
  const bad = () => `%!${verb}(${goTypeName(arg)}=${formatV(arg)})`;
  switch (verb) {
    case 'v':
      return formatV(arg);
    case 's':
      if (typeof arg === 'number' || typeof arg === 'boolean' || arg === null) return bad();
      return precision === undefined ? formatV(arg) : formatV(arg).slice(0, precision);
    case 'q':
      return typeof arg === 'string' ? goQuote(arg) : bad();
    case 't':
      return typeof arg === 'boolean' ? String(arg) : bad();
    case 'd':
      if (typeof arg !== 'number' || !Number.isInteger(arg)) return bad();
      return (flags.includes('+') && arg >= 0 ? '+' : '') + String(arg);
    case 'c':
      return typeof arg === 'number' && Number.isInteger(arg) ? String.fromCodePoint(arg) : bad();
    case 'x':
    case 'X': {
      let text: string;
      if (typeof arg === 'number' && Number.isInteger(arg)) text = arg.toString(16);
      else if (typeof arg === 'string') text = Buffer.from(arg).toString('hex');
      else return bad();
      return verb === 'X' ? text.toUpperCase() : text;
    }
    case 'f':
    case 'e':
    case 'g': {
      if (typeof arg !== 'number') return bad();
      if (verb === 'f') return arg.toFixed(precision ?? 6);
      if (verb === 'e') return goExponent(arg.toExponential(precision ?? 6));
      return precision === undefined ? formatNumber(arg) : formatG(arg, Math.max(precision, 1));
    }
    default:
      return `%!${verb}(${goTypeName(arg)}=${formatV(arg)})`;
  }
}

/**
 * Go's %g (strconv's rule): `precision` significant digits, or the fewest that read back
 * exactly; trailing zeros dropped; the exponent form when the exponent is below -4, or at
 * the precision and over (6 for the shortest).
 */
function formatG(n: number, precision?: number): string {
  const rounded = precision === undefined ? n : Number(n.toPrecision(precision));
  const [mantissa, e] = rounded.toExponential().split('e') as [string, string];
  const exponent = Number(e);
  const digits = mantissa.replace(/^-/, '').replace('.', '').length;
  const eprec = precision === undefined ? 6 : precision > digits && digits >= exponent + 1 ? digits : precision;
  return exponent < -4 || exponent >= eprec ? goExponent(rounded.toExponential()) : String(rounded);
}

/** Go writes an exponent with two digits at least: 1e-05, not JavaScript's 1e-5. */
function goExponent(text: string): string {
  return text.replace(/e([+-])(\d)$/, 'e$10$2');
}

function pad(text: string, flags: string, width: number, verb: string): string {
  if (text.length >= width) return text;
  if (flags.includes('-')) return text.padEnd(width);
  if (flags.includes('0') && 'dxXfeg'.includes(verb)) {
    const sign = /^[-+]/.test(text) ? text[0]! : '';
    return sign + text.slice(sign.length).padStart(width - sign.length, '0');
  }
  return text.padStart(width);
}

/** The Go type a value has in Nomad's structs (whole numbers are int64 there), as Go's errors and %!verb(type=value) name it. */
export function goTypeName(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64';
  if (typeof value === 'boolean') return 'bool';
  return Array.isArray(value) ? '[]interface {}' : 'map[string]interface {}';
}
