import type { Command } from '@oclif/core';
import Build from './build.js';
import Init from './init.js';

/**
 * Every `dhv` command, by its oclif ID (topics joined with ':'). Explicit, so the CLI
 * starts without scanning the file system for commands.
 */
export const COMMANDS: Record<string, Command.Class> = {
  build: Build,
  init: Init,
};
