import { AGENT_RESTORE_DEADLINE_MS, AGENT_TIMEOUT_MS } from '@dhv/sdk/plugin';

/** The agent's deadlines for a volume's calls, in one sentence, for any verdict that meets them. */
export const AGENT_DEADLINES = `restore gives all volumes one ${AGENT_RESTORE_DEADLINE_MS / 1000} s deadline from its start and kills plugins past it; create and delete are killed at ${AGENT_TIMEOUT_MS.create / 1000} s`;
