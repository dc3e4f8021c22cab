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
  | 'SEA_FAILED';

export class AuthoringError extends Error {
  constructor(
    readonly code: AuthoringErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AuthoringError';
  }
}
