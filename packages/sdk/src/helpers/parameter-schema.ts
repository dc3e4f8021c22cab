import { PluginFailure } from './errors.js';
import { DEFAULT_VOLUME_MODE, parseModeParameter, parseOwnerParameter } from './ownership.js';
import { parseSize, SizeError } from '../go/humanize.js';
import { goParseBool } from '../go/strconv-parsers.js';
import type { Parameters } from '../protocol/request.js';

/**
 * A plugin's volume parameters, declared once: what each key means, its default, and
 * whether an update may change it. The runtime reads a create's parameters with it before
 * the handler runs (`definePlugin({ parameters })`), and tells the handler which keys an
 * update changed (`ctx.changedParameters`).
 */

type Read<T> = { ok: true; value: T } | { ok: false; problem: string };

export interface ParameterField<T> {
  /** The value when the spec does not set the key. */
  readonly fallback: T;
  /** An update that changes this key is refused before the handler runs: delete and create again instead. */
  readonly fixed: boolean;
  /** What the value looks like, for messages: `one of ext4, xfs`. */
  readonly expects: string;
  read(text: string, name: string): Read<T>;
  /** The value in a message. */
  show(value: T): string;
}

interface FieldOptions<T> {
  default?: T;
  /** True when an update may not change it (a filesystem type, say): see {@link ParameterField.fixed}. */
  fixed?: boolean;
}

function field<T>(
  expects: string,
  fallback: T,
  options: FieldOptions<T>,
  read: (text: string, name: string) => Read<T>,
  show: (value: T) => string = shown,
): ParameterField<T> {
  return { expects, fallback: options.default ?? fallback, fixed: options.fixed ?? false, read, show };
}

/** One of a fixed set of words. */
export function choice<const V extends string>(
  values: readonly V[],
  options: FieldOptions<V> & { default: V },
): ParameterField<V> {
  const expects = `one of ${values.join(', ')}`;
  return field(expects, options.default, options, (text, name) =>
    (values as readonly string[]).includes(text)
      ? { ok: true, value: text as V }
      : { ok: false, problem: `${name} must be ${expects}, got ${JSON.stringify(text)}` },
  );
}

/** A boolean as Go's `strconv.ParseBool` reads it (`true`, `false`, `1`, `0`, `t`, `F`, …). */
export function flag(options: FieldOptions<boolean> = {}): ParameterField<boolean> {
  return field('true or false', false, options, (text, name) => {
    const parsed = goParseBool(text);
    return parsed.ok
      ? { ok: true, value: parsed.value }
      : { ok: false, problem: `${name} must be "true" or "false", got ${JSON.stringify(text)}` };
  });
}

/** Free text, optionally matching `pattern`. */
export function text(
  options: FieldOptions<string> & { pattern?: RegExp; describe?: string } = {},
): ParameterField<string> {
  const expects = options.describe ?? (options.pattern ? `text matching ${String(options.pattern)}` : 'text');
  return field(expects, '', options, (value, name) =>
    !options.pattern || options.pattern.test(value)
      ? { ok: true, value }
      : { ok: false, problem: `${name} must be ${expects}, got ${JSON.stringify(value)}` },
  );
}

/** Comma-separated words, each from `allowed`; repeats dropped, order kept. */
export function listOf<const V extends string>(
  allowed: readonly V[],
  options: FieldOptions<V[]> = {},
): ParameterField<V[]> {
  return field(`a comma-separated list of ${allowed.join(', ')}`, [], options, (value, name) => {
    const words = value
      .split(',')
      .map((w) => w.trim())
      .filter((w) => w !== '');
    const wrong = words.filter((w) => !(allowed as readonly string[]).includes(w));
    if (wrong.length > 0) {
      return {
        ok: false,
        problem: `${name}: ${wrong.map((w) => JSON.stringify(w)).join(', ')} ${wrong.length === 1 ? 'is' : 'are'} not allowed (allowed: ${allowed.join(', ')})`,
      };
    }
    return { ok: true, value: [...new Set(words)] as V[] };
  });
}

/** A size such as `512MiB` or `2G`, as the volume spec's capacities are read. */
export function size(options: FieldOptions<bigint> = {}): ParameterField<bigint> {
  return field('a size such as 512MiB', 0n, options, (value, name) => {
    try {
      return { ok: true, value: parseSize(value) };
    } catch (err) {
      if (!(err instanceof SizeError)) throw err;
      return { ok: false, problem: `${name}: ${err.message}` };
    }
  });
}

/** Permission bits, read exactly as Nomad's built-in `mkdir` reads its `mode`. */
export function mkdirMode(options: FieldOptions<number> = {}): ParameterField<number> {
  return field(
    'octal digits such as 0750',
    DEFAULT_VOLUME_MODE,
    options,
    (value) => {
      const parsed = parseModeParameter(value);
      return parsed.ok ? parsed : { ok: false, problem: parsed.problem };
    },
    (mode) => JSON.stringify(`0${mode.toString(8)}`),
  );
}

/** A user or group ID, read exactly as Nomad's built-in `mkdir` reads `uid` and `gid`; undefined leaves it as it is. */
export function mkdirOwner(
  which: 'uid' | 'gid',
  options: FieldOptions<number | undefined> = {},
): ParameterField<number | undefined> {
  return field(`a numeric ${which === 'uid' ? 'user' : 'group'} ID`, undefined, options, (value) => {
    const parsed = parseOwnerParameter(which, value);
    return parsed.ok ? parsed : { ok: false, problem: parsed.problem };
  });
}

export type ParameterFields = Readonly<Record<string, ParameterField<unknown>>>;
export type ParameterValues<F extends ParameterFields> = { [K in keyof F]: F[K]['fallback'] };

export interface ParameterSchema<F extends ParameterFields = ParameterFields> {
  readonly fields: F;
  /**
   * The spec's parameters as values, defaults filled in. Every problem (an unknown key, a
   * value a field refuses) is reported in one `EINVALIDPARAMETER` failure, each naming its key.
   */
  read(parameters: Parameters | null | undefined): ParameterValues<F>;
  /**
   * The keys whose values differ between two creates of one volume (compared as read, so
   * `mode = "750"` and `"0750"` are the same). A change of a `fixed` key is an
   * `EPARAMETERFIXED` failure that names the key, both values and what to do.
   */
  changes(before: Parameters | null | undefined, after: Parameters | null | undefined): string[];
}

export function parameterSchema<const F extends ParameterFields>(fields: F): ParameterSchema<F> {
  const names = Object.keys(fields);
  const read = (parameters: Parameters | null | undefined): ParameterValues<F> => {
    const given = parameters ?? {};
    const problems: string[] = [];
    for (const key of Object.keys(given)) {
      if (!Object.hasOwn(fields, key))
        problems.push(`unknown parameter ${JSON.stringify(key)} (known: ${names.join(', ') || 'none'})`);
    }
    const values = Object.create(null) as Record<string, unknown>;
    for (const name of names) {
      const definition = fields[name]!;
      const textGiven = Object.hasOwn(given, name) ? given[name] : undefined;
      if (textGiven === undefined) {
        values[name] = definition.fallback;
        continue;
      }
      const parsed = definition.read(textGiven, name);
      if (parsed.ok) values[name] = parsed.value;
      else problems.push(parsed.problem);
    }
    if (problems.length > 0)
      throw new PluginFailure('EINVALIDPARAMETER', `invalid parameters: ${problems.join('; ')}`, { problems });
    return values as ParameterValues<F>;
  };
  return {
    fields,
    read,
    changes(before, after) {
      const [old, now] = [read(before), read(after)];
      const changed = names.filter((name) => comparable(old[name]) !== comparable(now[name]));
      const refused = changed.filter((name) => fields[name]!.fixed);
      if (refused.length > 0) {
        const each = refused.map(
          (name) =>
            `${name} was ${fields[name]!.show(old[name])} and the update asks for ${fields[name]!.show(now[name])}`,
        );
        throw new PluginFailure(
          'EPARAMETERFIXED',
          `${refused.length === 1 ? 'parameter' : 'parameters'} ${refused.join(', ')} cannot change on update (${each.join('; ')}); to change ${refused.length === 1 ? 'it' : 'them'}, delete the volume and create it again`,
          { parameters: refused },
        );
      }
      return changed;
    },
  };
}

function comparable(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)) ?? 'undefined';
}

function shown(value: unknown): string {
  if (value === undefined) return 'unset';
  if (typeof value === 'bigint') return value.toString();
  return JSON.stringify(value);
}
