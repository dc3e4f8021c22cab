import type { Step, VolumeCall } from './recipe.js';
import type { ExploreCheckId } from './verdicts.js';

/** Said of a break found in the steps every run ends with. */
export const AT_THE_END = '(in the steps every run ends with: a fingerprint, two restarts, the delete of every volume)';

/** A break of the model of what Nomad needs, found at a step. */
export class Violation extends Error {
  /** The step that broke the model, and the call in it that did, when one call did. */
  step?: Step;
  call?: VolumeCall;
  /**
   * What the plugin said last on stderr in the calls of that step, when the message does not
   * already carry it ('' when it does, as a failed call's does): a call that succeeded may say
   * why it emptied a volume.
   */
  stderr?: string;

  constructor(
    readonly checkId: ExploreCheckId,
    message: string,
  ) {
    super(message);
  }
}

/** A step the recipe asks for that the volumes' state does not allow (restore of a volume never created). */
export class StepNotPossible extends Error {}
