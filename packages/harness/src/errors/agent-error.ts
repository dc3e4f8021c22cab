import { DhvError } from './dhv-error.js';

/**
 * Every way the simulated agent refuses or fails an operation, built in one place.
 * Each error carries a `code` a program can act on, and its message says what to do.
 */
export type AgentErrorCode =
  | 'VOLUME_NAME_EXISTS'
  | 'VOLUME_NOT_FOUND'
  | 'NODE_NOT_FOUND'
  | 'VOLUME_ID_AMBIGUOUS'
  | 'VOLUME_UPDATE_REFUSED'
  /** Allocations use the volume: delete and update are refused (Nomad's usage claims). */
  | 'VOLUME_IN_USE'
  | 'HOST_PATH_MISSING'
  | 'STATE_CORRUPT'
  | 'STATE_UNREADABLE'
  | 'STATE_WRITE_FAILED'
  | 'CONFIG_INVALID'
  | 'SPEC_INVALID'
  | 'PLACEMENT_FAILED'
  | 'AGENT_SHUT_DOWN'
  /** Another dhv process held the agent longer than a waiter waits. */
  | 'AGENT_BUSY'
  | 'REBOOT_FAILED'
  | 'VOLUMES_DIR_MISSING'
  /** A place the volume's plugin mounted holds nothing, or another filesystem. */
  | 'VOLUME_NOT_MOUNTED'
  | 'MOUNT_REPLACED'
  /** The data dir is a real Nomad agent's (it holds client/state.db). */
  | 'DATA_DIR_REFUSED'
  /** A command that only reads found no data dir, and made none. */
  | 'DATA_DIR_MISSING'
  /** `agent fingerprint` as a CI gate: a plugin was skipped (without --allow-skipped). */
  | 'PLUGINS_SKIPPED'
  /** `agent fingerprint` as a CI gate: a plugin would crash a real Nomad agent. */
  | 'NOMAD_WOULD_CRASH';

export class AgentError extends DhvError {
  constructor(
    readonly code: AgentErrorCode,
    message: string,
    details: Record<string, unknown> = {},
  ) {
    super(message, details);
  }
}
