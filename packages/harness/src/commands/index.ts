import type { Command } from '@oclif/core';

/**
 * Every `dhv` command, by its oclif ID (topics joined with ':'). Explicit, so the CLI
 * starts without scanning the file system for commands.
 */
export const COMMANDS: Record<string, Command.Class> = {};
