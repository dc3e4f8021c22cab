import { AGENT_TIMEOUT_MS } from '@dhv/sdk/plugin';

/**
 * The agent kills a create or delete at 60 s, but all restores share one deadline, 50 s
 * from the start of restore (PROTOCOL.md, "Restore on restart"): a create slower than that
 * alone is never restored.
 */
export const RESTORE_DEADLINE_MS = 50_000;

/** The agent's deadlines for a volume's calls, in one sentence, for any verdict that meets them. */
export const AGENT_DEADLINES = `restore gives all volumes one ${RESTORE_DEADLINE_MS / 1000} s deadline from its start and kills plugins past it; create and delete are killed at ${AGENT_TIMEOUT_MS.create / 1000} s`;
