import type { Hook } from '@oclif/core';
import { unknownCommandError } from '../commands/unknown-command.js';
import { writeError } from '../commands/dhv-command.js';
import { errorExitCode } from '../presenters/format-error.js';

/**
 * oclif calls this when the words typed name no command: the error goes out as every
 * usage mistake does (text, or JSON with --json) with exit 2, and nothing is asked.
 */
const hook: Hook.CommandNotFound = async function (options) {
  // -json too: the one-dash spelling every command takes, as Nomad spells it.
  const json = [...(options.argv ?? []), ...process.argv.slice(2)].some((arg) => arg === '--json' || arg === '-json');
  const err = unknownCommandError(options.config, options.id);
  await writeError(err, json);
  process.exit(errorExitCode(err));
};

export default hook;
