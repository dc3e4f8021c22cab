/** The three operations a Nomad agent asks of a host volume plugin (PROTOCOL.md, "Running an operation"). */
export const OPERATIONS = ['fingerprint', 'create', 'delete'] as const;

export type Operation = (typeof OPERATIONS)[number];

export function isOperation(value: unknown): value is Operation {
  return typeof value === 'string' && (OPERATIONS as readonly string[]).includes(value);
}

/**
 * How long the agent lets each operation run before it kills the plugin with SIGKILL.
 * The agent's code gives fingerprint 1 s at discovery, though its documentation says 5 s.
 */
export const AGENT_TIMEOUT_MS: Readonly<Record<Operation, number>> = {
  fingerprint: 1_000,
  create: 60_000,
  delete: 60_000,
};

/**
 * Restore after an agent restart shares one deadline, 50 s from its start (the first
 * fingerprint's), for all volumes: a create slower than that alone is never restored.
 */
export const AGENT_RESTORE_DEADLINE_MS = 50_000;

/** How long before the agent's deadline a plugin's AbortSignal fires, so it can undo its work. */
export const ABORT_MARGIN_MS: Readonly<Record<Operation, number>> = {
  fingerprint: 200,
  create: 5_000,
  delete: 5_000,
};
