import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Flags, Parser } from '@oclif/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { REPO_ROOT } from './support/kit.js';

/**
 * dhv's lean start-up (bin/lite-oclif.mjs) runs a command without oclif only when it reads the
 * command line exactly as oclif's own parser does; any other line goes to oclif. Here, for
 * every command with a lean bundle, lines made of its own flags (long, short, `--x=v`,
 * `--no-x`, given twice), values and words: whenever the lean parser takes a line, oclif's
 * parser takes it too and gives the same flags and arguments. The lines a user types are
 * taken (else the lean start-up would be oclif's with more work), and a line oclif refuses
 * goes to oclif.
 */

const HARNESS = join(REPO_ROOT, 'packages/harness');
const manifest = JSON.parse(readFileSync(join(HARNESS, 'oclif.manifest.json'), 'utf8')) as {
  dhvCli: string;
  dhvLean: Record<string, string>;
};

type FlagDef = {
  char?: string;
  type: 'boolean' | 'option';
  allowNo?: boolean;
  options?: string[];
  multiple?: boolean;
};
type CommandClass = {
  flags?: Record<string, FlagDef>;
  baseFlags?: Record<string, FlagDef>;
  args?: Record<string, unknown>;
  strict?: boolean;
  enableJsonFlag?: boolean;
};
type Parsed = { args: Record<string, unknown>; flags: Record<string, unknown> };

const LEAN_IDS = Object.keys(manifest.dhvLean).sort();
const require = createRequire(import.meta.url);
const leanCommand = (id: string) =>
  (require(join(HARNESS, manifest.dhvCli, manifest.dhvLean[id]!)) as { command: CommandClass }).command;
let parseSimple: (argv: string[], command: CommandClass) => Promise<Parsed | undefined>;
let oclifCommands: Record<string, CommandClass>;

const JSON_FLAG = Flags.boolean({ description: 'Format output as json.', helpGroup: 'GLOBAL' });
/** oclif's own reading of the line, as Command.parse does it for the command. */
async function oclifParse(command: CommandClass, argv: string[]): Promise<Parsed> {
  const flags = { ...command.baseFlags, ...command.flags, ...(command.enableJsonFlag ? { json: JSON_FLAG } : {}) };
  const { args, flags: values } = await Parser.parse(argv, {
    flags: flags as never,
    args: command.args as never,
    strict: command.strict ?? true,
    context: {} as never,
  });
  return { args, flags: values };
}

// oclif reads a missing argument from stdin when it is not a terminal (10 ms each): a terminal here.
let stdinWasTty: PropertyDescriptor | undefined;
beforeAll(async () => {
  // Each lean bundle loaded adds lite-oclif's EPIPE listener to stdout: one per command here.
  process.stdout.setMaxListeners(LEAN_IDS.length + 10);
  stdinWasTty = Object.getOwnPropertyDescriptor(process.stdin, 'isTTY');
  Object.defineProperty(process.stdin, 'isTTY', { value: true, configurable: true });
  ({ parseSimple } = (await import(pathToFileURL(join(HARNESS, 'bin/lite-oclif.mjs')).href)) as {
    parseSimple: typeof parseSimple;
  });
  ({ COMMANDS: oclifCommands } = (await import(pathToFileURL(join(HARNESS, 'dist/commands/index.js')).href)) as {
    COMMANDS: Record<string, CommandClass>;
  });
});
afterAll(() => {
  if (stdinWasTty) Object.defineProperty(process.stdin, 'isTTY', stdinWasTty);
  else delete (process.stdin as { isTTY?: boolean }).isTTY;
});

/** The words a line for `command` is made of. */
function wordsOf(command: CommandClass): string[] {
  const flags = {
    ...command.baseFlags,
    ...command.flags,
    ...(command.enableJsonFlag ? { json: { type: 'boolean' } } : {}),
  };
  const values = ['a', 'create', 'discovery', '1', '0', '-1', '', 'x=y', 'mode=0750', '/tmp/v'];
  const words = ['p', 'q', '-', '--', '--help', '--nope', ...values];
  for (const [name, flag] of Object.entries(flags) as Array<[string, FlagDef]>) {
    words.push(`--${name}`, `--no-${name}`);
    if (flag.char) words.push(`-${flag.char}`);
    for (const value of [...values.slice(0, 4), ...(flag.options ?? [])]) words.push(`--${name}=${value}`, value);
  }
  return words;
}

describe.each(LEAN_IDS)('the lean parser of dhv %s', (id) => {
  test('reads every line it takes as oclif does', async () => {
    const lean = leanCommand(id);
    const oclif = oclifCommands[id]!;
    const words = wordsOf(lean);
    let taken = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...words), { maxLength: 7 }), async (argv) => {
        const mine = await parseSimple([...argv], lean);
        if (mine === undefined) return;
        taken++;
        const theirs = await oclifParse(oclif, [...argv]);
        expect({ args: mine.args, flags: mine.flags }).toEqual(theirs);
      }),
      { numRuns: 300, seed: 37 },
    );
    // Lines of random words are mostly refused, but not all: the property judged some.
    expect(taken).toBeGreaterThan(0);
  });
});

/** Lines as the docs and the tests type them: each runs without oclif, and as oclif reads it. */
const TYPED: Array<[string, string[]]> = [
  [
    'check',
    ['dist/p', '--only', 'create', '--param', 'mode=0750', '--capacity-min', '16MiB', '--capacity-max', '64MiB'],
  ],
  ['check', ['dist/p', '--json', '--junit', 'report.xml', '--no-explore', '--skip', 'tasks', '--skip', 'explore']],
  ['check', ['dist/p', '--param', 'fs=xfs', '--capacity-floor', '300MiB', '--supports', 'expansion', '--seed', '24']],
  ['plugin:run', ['dist/p', 'create', '--volumes-dir', '/v', '--name', 'demo', '--param', 'a=b', '--param', 'c=d']],
  ['check', ['dist/p', '--no-explore', '--json']],
  ['namespace:apply', ['--description', 'team a', 'a']],
  ['agent:gc', ['--id', 'a', '--id', 'b']],
  ['volume:delete', ['db', '--data-dir', '/d']],
  ['job:run', ['job.hcl', '--data-dir', '/d']],
];

describe('the lines users type', () => {
  test.each(TYPED)('dhv %s %j runs without oclif, read as oclif reads it', async (id, argv) => {
    const mine = await parseSimple([...argv], leanCommand(id));
    expect(mine, 'the lean parser refused it').toBeDefined();
    expect({ args: mine!.args, flags: mine!.flags }).toEqual(await oclifParse(oclifCommands[id]!, [...argv]));
  });

  test('a flag that takes one value, given twice, goes to oclif, which refuses it', async () => {
    const argv = ['db', '--data-dir', '/a', '--data-dir', '/b'];
    expect(await parseSimple([...argv], leanCommand('volume:delete'))).toBeUndefined();
    await expect(oclifParse(oclifCommands['volume:delete']!, [...argv])).rejects.toThrow(
      'Flag --data-dir can only be specified once',
    );
  });
});
