import { restoreRequest } from '@dhv/sdk/client';
import type { CreateInput } from '../types.js';
import type { AgentCalls } from './agent-calls.js';
import { crowdedWords, crowding, type Crowding } from './crowded-table.js';
import { StepNotPossible, Violation } from './violation.js';

/**
 * How often a restore that failed under the crowded table is run, in all, under it (it is
 * cheap there: the namespace is made), and then without it: how often it fails, and
 * whether the table decides it.
 */
export const CROWDED_TRIES = 10;
export const PLAIN_TRIES = 5;

/**
 * The restores (the saved create request again) of one run under the crowded mount table.
 * Its namespace is made at the first of them and kept for those that follow it; any other
 * step ends it first (end()), since its copies of the volumes' mounts would hold them.
 */
export class CrowdedRestores {
  private made: Promise<Crowding | undefined> | undefined;

  /** `dir`: a folder of the run's own, beside its volumes dir. */
  constructor(
    private readonly dir: string,
    private readonly plugin: string,
  ) {}

  /** The restore; when it fails, the verdict names the condition and says how the same restore does without it. */
  async restore(agent: AgentCalls, request: CreateInput, label: string): Promise<string> {
    const crowded = await (this.made ??= crowding(this.dir, this.plugin));
    if (crowded === undefined)
      throw new StepNotPossible(
        `"restore ${label} crowded" cannot run here: a crowded mount table is made in a mount namespace of dhv's own, as root only`,
      );
    const what = `restore of ${label} (its saved create request again) ${crowdedWords(crowded)}`;
    const restore = (how: string, executable?: string) => agent.create(restoreRequest(request), how, { executable });
    try {
      return await restore(what, crowded.executable);
    } catch (err) {
      if (!(err instanceof Violation)) throw err;
      const failed = async (tries: number, executable?: string) => {
        let n = 0;
        for (let i = 0; i < tries; i++)
          n += await restore(`restore of ${label}`, executable).then(
            () => 0,
            () => 1,
          );
        return n;
      };
      const crowdedFailed = 1 + (await failed(CROWDED_TRIES - 1, crowded.executable));
      const plainFailed = await failed(PLAIN_TRIES);
      const plain =
        plainFailed === 0
          ? `passed ${PLAIN_TRIES} of ${PLAIN_TRIES} times without those mounts: the size of the mount table decides it`
          : `failed ${plainFailed} of ${PLAIN_TRIES} times without those mounts too`;
      err.message += `; run again, the same restore failed ${crowdedFailed} of ${CROWDED_TRIES} times under that table and ${plain}`;
      throw err;
    }
  }

  /** Ends the namespace, when one was made, and every mount in it. */
  async end(): Promise<void> {
    const made = this.made;
    this.made = undefined;
    await (await made?.catch(() => undefined))?.end();
  }
}
