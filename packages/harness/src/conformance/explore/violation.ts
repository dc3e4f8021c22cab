import type { ExploreCheckId } from './verdicts.js';

/** Said of a break found in the steps every run ends with. */
export const AT_THE_END = '(in the steps every run ends with: a fingerprint, two restarts, the delete of every volume)';

/** A break of the model of what Nomad needs, found at a step. */
export class Violation extends Error {
  constructor(
    readonly checkId: ExploreCheckId,
    message: string,
  ) {
    super(message);
  }
}

/** A step the recipe asks for that the volumes' state does not allow (restore of a volume never created). */
export class StepNotPossible extends Error {}
