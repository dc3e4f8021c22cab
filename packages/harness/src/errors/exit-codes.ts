/**
 * The exit status of every `dhv` command, applied in one place (DhvCommand.catch).
 * The table is repeated in packages/harness/README.md.
 */
export const EXIT_CODES = {
  /** The command did what was asked (for `dhv check`: no required check failed). */
  ok: 0,
  /** The operation failed: a plugin failed, the agent refused, a required check failed. */
  failed: 1,
  /** The command line is wrong: unknown flag, missing argument, a flag value that does not parse. */
  usage: 2,
  /** `job run` (not -detach): an allocation could not be placed, as Nomad's monitor exits. */
  placementFailed: 2,
  /** Stopped by SIGINT (Ctrl-C). */
  interrupted: 130,
  /** Stopped by SIGTERM. */
  terminated: 143,
} as const;

export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];
