import { DhvError } from '../errors/dhv-error.js';

/**
 * Why `dhv init` or `dhv build` could not do what was asked. The message says what to
 * do next; `code` lets programs (and `--json`) tell the cases apart.
 */
export type AuthoringErrorCode =
  | 'INVALID_PLUGIN_ID'
  | 'UNKNOWN_TEMPLATE'
  | 'DIRECTORY_NOT_EMPTY'
  | 'NOT_A_DIRECTORY'
  | 'BAD_PACKAGE_SOURCE'
  | 'PACK_FAILED'
  | 'BAD_INTERPRETER'
  | 'BUILD_FAILED'
  | 'BUILD_DOES_NOT_RUN'
  | 'SEA_FAILED'
  /** `dhv plugin install`: the reference plugin is not in this install, or another file holds its name. */
  | 'PLUGIN_UNAVAILABLE'
  | 'PLUGIN_FILE_DIFFERS';

export class AuthoringError extends DhvError {
  constructor(
    readonly code: AuthoringErrorCode,
    message: string,
    details: Record<string, unknown> = {},
  ) {
    super(message, details);
  }
}
