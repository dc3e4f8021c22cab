import { restoreRequest } from '@dhv/sdk/client';
import type { CreateInput } from '../types.js';
import type { AgentCalls } from './agent-calls.js';
import { crowdedWords, type Crowding } from './crowded-table.js';
import { StepNotPossible, Violation } from './violation.js';

/** How often a restore that failed under the crowded table is run again without it, to tell whether the table decided it. */
export const PLAIN_TRIES = 5;

/**
 * A restore (the saved create request again) run under the crowded mount table; when it
 * fails, the verdict names the condition and says how the same restore does without it.
 */
export async function crowdedRestore(
  agent: AgentCalls,
  request: CreateInput,
  label: string,
  crowding: Crowding | undefined,
): Promise<string> {
  if (crowding === undefined)
    throw new StepNotPossible(
      `"restore ${label} crowded" cannot run here: a crowded mount table is made in a mount namespace of dhv's own, as root only`,
    );
  const what = `restore of ${label} (its saved create request again) ${crowdedWords(crowding.tableBytes)}`;
  try {
    return await agent.create(restoreRequest(request), what, { executable: crowding.executable });
  } catch (err) {
    if (!(err instanceof Violation)) throw err;
    let passed = 0;
    for (let i = 0; i < PLAIN_TRIES; i++)
      passed += await agent.create(restoreRequest(request), `restore of ${label}`).then(
        () => 1,
        () => 0,
      );
    err.message +=
      passed === PLAIN_TRIES
        ? `; the same restore without those mounts passed ${PLAIN_TRIES} of ${PLAIN_TRIES} times: the size of the mount table decides it`
        : `; the same restore without those mounts failed ${PLAIN_TRIES - passed} of ${PLAIN_TRIES} times too`;
    throw err;
  }
}
