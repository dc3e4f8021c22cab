import { EXIT_CODES, type ExitCode } from './exit-codes.js';

/**
 * What every error of the harness has: a `code` a program can act on, the exit status a
 * command ends with, and one JSON form, `{ code, message, ...details }`.
 */
export abstract class DhvError extends Error {
  abstract readonly code: string;
  readonly exitCode: ExitCode = EXIT_CODES.failed;

  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }

  toJSON(): Record<string, unknown> {
    return { code: this.code, message: this.message, ...this.details };
  }
}

/** A command line that cannot be run as typed: a flag value that does not parse, a missing argument. */
export class UsageError extends DhvError {
  override readonly exitCode = EXIT_CODES.usage;

  constructor(
    message: string,
    readonly code = 'USAGE',
    details: Record<string, unknown> = {},
  ) {
    super(message, details);
  }
}
