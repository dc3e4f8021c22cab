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

/**
 * fmt.Sprintf with the verbs templates use: v s d q t x X f e g c, flags, width and
 * precision; Go's %!verb(...) on a mismatch. A width or precision fmt's parsenum gives up
 * on (past a million before its last digit) ends the format there with %!(NOVERB), as Go's does.
 */
export function goPrintf(format: string, args: readonly unknown[]): string {
  let next = 0;
  let out = '';
  let at = 0;
  for (const match of format.matchAll(VERB)) {
    const [whole, flags = '', width, precision, verb = ''] = match;
    out += format.slice(at, match.index);
    at = match.index + whole.length;
    if (tooLargeNumber(width) || tooLargeNumber(precision)) {
      out += '%!(NOVERB)';
      at = format.length;
      break;
    }
    if (verb === '%') out += '%';
    else if (next >= args.length) out += `%!${verb}(MISSING)`;
    else {
      const arg = args[next++];
      const text = formatVerb(verb, arg, flags, precision === undefined ? undefined : Number(precision));
      out += pad(text, flags, width === undefined ? 0 : Number(width), verb);
    }
  }
  out += format.slice(at);
  if (next < args.length) {
    const extra = args.slice(next).map((a) => `${goTypeName(a)}=${formatV(a)}`);
    return `${out}%!(EXTRA ${extra.join(', ')})`;
  }
  return out;
}

/** fmt's parsenum overflows when the number before a digit is already past a million. */
function tooLargeNumber(digits: string | undefined): boolean {
  return digits !== undefined && digits.length > 1 && Number(digits.slice(0, -1)) > 1e6;
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
      if (typeof arg !== 'number' || !Number.isInteger(arg)) return bad();
      // Go writes U+FFFD for a number that is no Unicode code point (a surrogate, past U+10FFFF, negative).
      return arg < 0 || arg > 0x10ffff || (arg >= 0xd800 && arg <= 0xdfff) ? '\ufffd' : String.fromCodePoint(arg);
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
      if (verb === 'g' && precision === undefined) return formatNumber(arg);
      return formatFixedPrecision(arg, verb, precision ?? 6);
    }
    default:
      return `%!${verb}(${goTypeName(arg)}=${formatV(arg)})`;
  }
}

/**
 * Go's shortest %g (strconv's rule): the fewest digits that read back exactly; the
 * exponent form when the exponent is below -4, or 6 and over.
 */
function formatG(n: number): string {
  const [, e] = n.toExponential().split('e') as [string, string];
  const exponent = Number(e);
  return exponent < -4 || exponent >= 6 ? goExponent(n.toExponential()) : String(n);
}

/**
 * A float64's exact decimal digits (no leading or trailing zeros) and where the point
 * goes: the value is 0.<digits> × 10^point. Every double is a whole number times a power
 * of two, so its decimal expansion ends: strconv starts from the same exact value.
 */
function exactDecimal(n: number): { digits: string; point: number } {
  if (n === 0) return { digits: '', point: 0 };
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(n));
  const bits = view.getBigUint64(0);
  const biased = Number(bits >> 52n);
  const fraction = bits & ((1n << 52n) - 1n);
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const exponent = (biased === 0 ? 1 : biased) - 1075;
  // mantissa × 2^exponent = mantissa × 5^-exponent / 10^-exponent when the exponent is negative.
  const whole = exponent >= 0 ? mantissa << BigInt(exponent) : mantissa * 5n ** BigInt(-exponent);
  const text = whole.toString();
  const digits = text.replace(/0+$/, '');
  return { digits, point: text.length + (exponent >= 0 ? 0 : exponent) };
}

/** strconv's decimal rounding to `keep` digits: half to even on the exact value, trailing zeros trimmed. */
function roundDigits(d: { digits: string; point: number }, keep: number): { digits: string; point: number } {
  if (keep < 0) return { digits: '', point: 0 };
  if (keep >= d.digits.length) return d;
  const next = d.digits.charCodeAt(keep) - 48;
  const exactlyHalf = next === 5 && keep + 1 === d.digits.length;
  const up = exactlyHalf ? keep > 0 && (d.digits.charCodeAt(keep - 1) - 48) % 2 === 1 : next >= 5;
  let digits = d.digits.slice(0, keep);
  let point = d.point;
  if (up) {
    let i = digits.length - 1;
    while (i >= 0 && digits[i] === '9') i--;
    if (i < 0) {
      digits = '1';
      point += 1;
    } else digits = digits.slice(0, i) + String.fromCharCode(digits.charCodeAt(i) + 1);
  }
  digits = digits.replace(/0+$/, '');
  return digits === '' ? { digits: '', point: 0 } : { digits, point };
}

/** %f, %e and %g with a precision, as strconv.FormatFloat writes them: any precision, Go's rounding. */
function formatFixedPrecision(n: number, verb: string, precision: number): string {
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
  const sign = n < 0 || Object.is(n, -0) ? '-' : '';
  const exact = exactDecimal(n);
  const digitAt = (d: { digits: string }, i: number) => (i >= 0 && i < d.digits.length ? d.digits[i] : '0');
  const fixed = (d: { digits: string; point: number }, places: number) => {
    const whole = d.point > 0 ? Array.from({ length: d.point }, (_, i) => digitAt(d, i)).join('') : '0';
    const part = Array.from({ length: places }, (_, i) => digitAt(d, d.point + i)).join('');
    return places > 0 ? `${whole}.${part}` : whole;
  };
  const scientific = (d: { digits: string; point: number }, places: number) => {
    const exponent = d.digits === '' ? 0 : d.point - 1;
    const part = Array.from({ length: places }, (_, i) => digitAt(d, i + 1)).join('');
    const e = Math.abs(exponent);
    return `${digitAt(d, 0)}${places > 0 ? `.${part}` : ''}e${exponent < 0 ? '-' : '+'}${e < 10 ? `0${e}` : e}`;
  };
  if (verb === 'f') return sign + fixed(roundDigits(exact, exact.point + precision), precision);
  if (verb === 'e') return sign + scientific(roundDigits(exact, precision + 1), precision);
  // %g: `precision` significant digits (at least 1); the exponent form below -4 or at the precision and over.
  const p = Math.max(precision, 1);
  const d = roundDigits(exact, p);
  let eprec = p;
  if (eprec > d.digits.length && d.digits.length >= d.point) eprec = d.digits.length;
  const exponent = d.point - 1;
  if (exponent < -4 || exponent >= eprec) return sign + scientific(d, Math.min(p, d.digits.length) - 1);
  return sign + fixed(d, Math.max((p > d.point ? d.digits.length : p) - d.point, 0));
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
