// What a dhv command needs of @oclif/core, for its lean bundle (bin/build-cli.mjs): the
// Command base class, Flags and Args, and a runner. oclif itself (its config, plugins, help,
// parser and their packages) is most of what `dhv volume status` used to load; here a command
// runs without it when its command line is one this parser reads exactly as oclif's does
// (test/cli-lean-parser.test.ts): flags it knows, each once unless it takes many values,
// values that do not start with a dash, no more arguments than it takes. Anything else (help,
// a usage mistake oclif words, a flag this parser does not model) goes to oclif through
// `fallBack`, before the command has run any of its own code.
import { format, inspect } from 'node:util';
import { maybeWsl, userAgent } from './cli-files.cjs';

/** Any of these anywhere on the command line: oclif answers (help, version), not the lean path. */
const OCLIF_ONLY = new Set(['--help', '-h', '-help', '--version', '-v']);
/** Flag settings whose meaning this parser does not model: a command with one goes to oclif. */
const UNMODELLED = ['relationships', 'exclusive', 'dependsOn', 'exactlyOne', 'atLeastOne', 'aliases', 'charAliases'];
const UNMODELLED_MORE = ['deprecated', 'deprecateAliases', 'delimiter', 'allowStdin'];

// oclif's: a closed pipe (`dhv volume status | head -1`) is not an error.
process.stdout.on('error', (err) => {
  if (err && err.code === 'EPIPE') return;
  throw err;
});

/** oclif's ExitError as DhvCommand.catch and format-error read it: `this.exit(code)` ends a command by throwing it. */
class ExitError extends Error {
  code = 'EEXIT';
  constructor(exitCode) {
    super(`EEXIT: ${exitCode}`);
    this.oclif = { exit: exitCode };
  }
}

export class Command {
  static enableJsonFlag = false;
  static strict = true;
  static args = {};
  static flags;
  static baseFlags;
  parsed = false;

  constructor(argv, config) {
    this.argv = argv;
    this.config = config;
    this.id = this.ctor.id;
  }

  get ctor() {
    return this.constructor;
  }

  async _run() {
    let err;
    let result;
    try {
      await this.init();
      result = await this.run();
    } catch (error) {
      err = error;
      await this.catch(error);
    } finally {
      await this.finally(err);
    }
    if (result && this.jsonEnabled()) this.logJson(this.toSuccessJson(result));
    return result;
  }

  async init() {}

  async finally() {}

  async catch(err) {
    process.exitCode = process.exitCode ?? err.exitCode ?? 1;
    throw err;
  }

  exit(code = 0) {
    throw new ExitError(code);
  }

  jsonEnabled() {
    if (!this.ctor.enableJsonFlag) return false;
    const rest = this.argv.indexOf('--');
    const json = this.argv.indexOf('--json');
    return json !== -1 && (rest === -1 || json < rest);
  }

  log(message = '', ...args) {
    if (this.jsonEnabled()) return;
    process.stdout.write(`${format(typeof message === 'string' ? message : inspect(message), ...args)}\n`);
  }

  logToStderr(message = '', ...args) {
    if (this.jsonEnabled()) return;
    process.stderr.write(`${format(typeof message === 'string' ? message : inspect(message), ...args)}\n`);
  }

  toSuccessJson(result) {
    return result;
  }

  async parse(options = this.ctor, argv = this.argv) {
    const parsed = await parseSimple(argv, options);
    // runLean parsed the same line before the command ran: only a command asking for something else lands here.
    if (parsed === undefined)
      throw new Error(`dhv's lean start-up cannot parse ${JSON.stringify(argv)} for ${this.id}`);
    this.argv = [...argv];
    this.parsed = true;
    return parsed;
  }
}

const option =
  (defaults) =>
  (options = {}) => ({ parse: async (input) => input, ...defaults, ...options, type: 'option' });

export const Flags = {
  string: option({}),
  boolean: (options = {}) => ({
    parse: async (input) => input,
    ...options,
    allowNo: Boolean(options.allowNo),
    type: 'boolean',
  }),
  integer: (options = {}) =>
    option({})({
      ...options,
      parse: async (input) => {
        // oclif's own words for a bad integer come from oclif: parseSimple falls back on a throw.
        if (!/^-?\d+$/.test(input)) throw new Error(`Expected an integer but received: ${input}`);
        const value = Number.parseInt(input, 10);
        if (options.min !== undefined && value < options.min) throw new Error(`below ${options.min}`);
        if (options.max !== undefined && value > options.max) throw new Error(`above ${options.max}`);
        return options.parse ? options.parse(String(value)) : value;
      },
    }),
};

export const Args = {
  string: (options = {}) => ({ parse: async (input) => input, ...options }),
};

const JSON_FLAG = Flags.boolean({ description: 'Format output as json.', helpGroup: 'GLOBAL' });

function allFlags(options) {
  return { ...options.baseFlags, ...options.flags, ...(options.enableJsonFlag ? { json: JSON_FLAG } : {}) };
}

/**
 * oclif's reading of `argv` for a command (flags, args), or undefined when the line is not
 * one this parser reads as oclif would: then oclif must (its errors, its help).
 */
export async function parseSimple(argv, options) {
  const flags = allFlags(options);
  const defs = Object.values(flags);
  if (defs.some((flag) => [...UNMODELLED, ...UNMODELLED_MORE].some((key) => flag[key]))) return undefined;
  const argDefs = Object.entries(options.args ?? {});
  if (argDefs.some(([, arg]) => arg.options)) return undefined;
  const line = readLine(argv, flags);
  if (line === undefined) return undefined;
  const { given, positional } = line;
  if (options.strict !== false && positional.length > argDefs.length) return undefined;
  try {
    const values = {};
    const fromDefault = [];
    for (const [name, flag] of Object.entries(flags)) {
      const input = given.get(name);
      if (input !== undefined)
        values[name] = flag.multiple
          ? await Promise.all(input.map((one) => parseOption(flag, one)))
          : await parseOption(flag, input);
      else if (flag.env && process.env[flag.env]) {
        if (flag.type === 'boolean' || flag.multiple) return undefined;
        values[name] = await parseOption(flag, process.env[flag.env]);
      } else if (flag.default !== undefined) fromDefault.push([name, flag]);
      else if (flag.required) return undefined;
    }
    const chosen = { ...values };
    for (const [name, flag] of fromDefault)
      values[name] =
        typeof flag.default === 'function' ? await flag.default({ flags: chosen, options: flag }) : flag.default;
    const args = {};
    for (const [index, [name, arg]] of argDefs.entries()) {
      const input = positional[index];
      if (input !== undefined) args[name] = await arg.parse(input, {}, arg);
      else if (arg.default !== undefined)
        args[name] = typeof arg.default === 'function' ? await arg.default() : arg.default;
      else if (arg.required) return undefined;
    }
    for (const key of Object.keys(values)) if (values[key] === undefined) delete values[key];
    return { args, flags: values, argv: positional, raw: [], metadata: { flags: {} }, nonExistentFlags: [] };
  } catch {
    return undefined;
  }
}

/**
 * The line's flags (name → input: `true`, or `false` for `--no-<name>` where the flag
 * allows it, a string, or an array of strings for a flag given many times) and its other
 * words; undefined for a line oclif reads otherwise or refuses: an unknown flag, one given
 * twice that takes one value, a value that starts with a dash, `--`, a help flag, or a word
 * after a greedy flag that takes many values (oclif counts it as one more value of that flag).
 */
function readLine(argv, flags) {
  const byChar = new Map(Object.entries(flags).flatMap(([name, flag]) => (flag.char ? [[flag.char, name]] : [])));
  const known = (name) => (name !== undefined && Object.hasOwn(flags, name) ? flags[name] : undefined);
  const given = new Map();
  const positional = [];
  // oclif's current flag: the last that took a value, whatever booleans came after it.
  let lastOption;
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i];
    if (token === '--' || OCLIF_ONLY.has(token)) return undefined;
    if (!token.startsWith('-') || token === '-') {
      if (lastOption?.multiple && !lastOption.multipleNonGreedy) return undefined;
      positional.push(token);
      continue;
    }
    const long = /^--([^=]+)(?:=(.*))?$/s.exec(token);
    let name = long ? long[1] : token.length === 2 ? byChar.get(token[1]) : undefined;
    let flag = known(name);
    let negated = false;
    if (flag === undefined && long && name.startsWith('no-') && known(name.slice(3))?.allowNo) {
      name = name.slice(3);
      flag = flags[name];
      negated = true;
    }
    if (flag === undefined || (given.has(name) && !flag.multiple)) return undefined;
    let value = long ? long[2] : undefined;
    if (flag.type === 'boolean') {
      if (value !== undefined) return undefined;
      given.set(name, !negated);
      continue;
    }
    if (negated) return undefined;
    if (value === undefined) value = argv[++i];
    if (value === undefined || value === '' || value.startsWith('-')) return undefined;
    lastOption = flag;
    given.set(name, flag.multiple ? [...(given.get(name) ?? []), value] : value);
  }
  return { given, positional };
}

async function parseOption(flag, input) {
  if (flag.type === 'boolean') return flag.parse(input, {}, flag);
  if (flag.options && !flag.options.includes(input)) throw new Error('not one of the options');
  return flag.parse(input, {}, flag);
}

/**
 * Runs `command` (a class built on this module's Command) on `argv`, as oclif's execute would
 * for this command line; calls `fallBack` instead, before any of the command's own code runs,
 * when the line is one for oclif (parseSimple).
 */
export async function runLean({ command, id, argv, pjson, nomadSpelling, fallBack }) {
  if (process.env.DHV_CONTENT_TYPE !== undefined || maybeWsl()) return fallBack();
  const parsed = await parseSimple(nomadSpelling(argv, allFlags(command)), command);
  if (parsed === undefined) return fallBack();
  command.id = id;
  const cmd = new command(argv, liteConfig(pjson));
  try {
    await cmd._run();
  } catch (err) {
    if (err?.code === 'EEXIT') process.exitCode = err.oclif.exit;
    else {
      process.exitCode = err?.oclif?.exit ?? 1;
      process.stderr.write(`Error: ${err?.message ?? String(err)}\n`);
    }
  }
}

/** The part of oclif's Config a dhv command reads. */
function liteConfig(pjson) {
  return {
    name: pjson.name,
    version: pjson.version,
    bin: pjson.oclif.bin,
    pjson,
    platform: process.platform,
    arch: process.arch === 'ia32' ? 'x86' : process.arch,
    userAgent: userAgent(pjson),
  };
}
