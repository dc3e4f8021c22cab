import { fileURLToPath } from 'node:url';
import { Config } from '@oclif/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { unknownCommandError } from './unknown-command.js';

/**
 * What `dhv` says to words that name no command, against the real command set (the
 * harness's oclif manifest). oclif hands the hook every word before the first flag joined
 * by `:`; test/cli-conventions.test.ts runs the whole `dhv` for a few of these.
 */

let config: Config;
beforeAll(async () => {
  config = await Config.load(fileURLToPath(new URL('../..', import.meta.url)));
});

const said = (id: string) => unknownCommandError(config, id).message;

describe('a command line that names no command', () => {
  it('suggests the topic a typo is nearest to, and where the list of commands is', () => {
    expect(said('volum')).toBe(
      'volum is not a dhv command.\nDid you mean `dhv volume`?\nRun `dhv help` for the list of commands.',
    );
    expect(said('chek')).toBe(
      'chek is not a dhv command.\nDid you mean `dhv check`?\nRun `dhv help` for the list of commands.',
    );
  });

  it('finishes the command when the next word makes one, and leaves out the arguments after it', () => {
    expect(said('volume:creat:spec.hcl')).toBe(
      'volume creat is not a dhv command.\nDid you mean `dhv volume create`?\n' +
        'Run `dhv help volume` for the list of volume commands.',
    );
    expect(said('plugn:run')).toBe(
      'plugn run is not a dhv command.\nDid you mean `dhv plugin run`?\nRun `dhv help` for the list of commands.',
    );
    expect(said('volume:claim:lst')).toBe(
      'volume claim lst is not a dhv command.\nDid you mean `dhv volume claim list`?\n' +
        'Run `dhv help volume claim` for the list of volume claim commands.',
    );
  });

  it('offers at most three of the commands the typed word begins, in order', () => {
    expect(said('v').split('\n')[1]).toBe('Did you mean `dhv version` or `dhv volume`?');
    expect(unknownCommandError(config, 'a').details).toEqual({
      command: 'a',
      suggestions: ['agent', 'alloc', 'autocomplete'],
    });
  });

  it('suggests nothing for a word far from every command (Nomad has eval; dhv keeps no evaluations)', () => {
    expect(said('eval')).toBe('eval is not a dhv command.\nRun `dhv help` for the list of commands.');
    expect(said('xyzzy')).toBe('xyzzy is not a dhv command.\nRun `dhv help` for the list of commands.');
  });

  it('is a usage mistake (exit 2) a program can read: the command as typed and the suggestions', () => {
    const err = unknownCommandError(config, 'agent:restrat');
    expect([err.code, err.exitCode]).toEqual(['UNKNOWN_COMMAND', 2]);
    expect(err.toJSON()).toEqual({
      code: 'UNKNOWN_COMMAND',
      message:
        'agent restrat is not a dhv command.\nDid you mean `dhv agent restart`?\n' +
        'Run `dhv help agent` for the list of agent commands.',
      command: 'agent restrat',
      suggestions: ['agent restart'],
    });
  });
});
