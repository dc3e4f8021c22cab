import type { Hook } from '@oclif/core';
import { unknownCommandError } from '../commands/unknown-command.js';
import { writeError } from '../commands/dhv-command.js';
import { errorExitCode } from '../presenters/format-error.js';

/**
 * oclif calls this when the words typed name no command: the error goes out as every
 * usage mistake does (text, or JSON with --json) with exit 2, and nothing is asked.
 */
const hook: Hook.CommandNotFound = async function (options) {
  const json = (options.argv ?? []).includes('--json') || process.argv.slice(2).includes('--json');
  const err = unknownCommandError(options.config, options.id);
  await writeError(err, json);
  process.exit(errorExitCode(err));
};

export default hook;
