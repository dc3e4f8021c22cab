import fc from 'fast-check';
import type { VolumeLab } from './lab.js';
import { MAX_FILL, VOLUME_POOL } from './pool.js';
import type { Pick, Step, VolumeCall, VolumeKey } from './recipe.js';

const MAX_STEPS = 12;

type Aim = VolumeKey | Pick;

/** One step as a fast-check command: it runs only when the volumes' state allows it. */
class StepCommand implements fc.AsyncCommand<VolumeLab, VolumeLab> {
  constructor(readonly step: Step<Aim>) {}
  check(lab: Readonly<VolumeLab>): boolean {
    return lab.resolve(this.step) !== undefined;
  }
  run(_model: VolumeLab, lab: VolumeLab): Promise<void> {
    return lab.run(lab.resolve(this.step)!);
  }
  toString(): string {
    return JSON.stringify(this.step);
  }
}

const named = fc.constantFrom(...VOLUME_POOL);
const picked = fc.nat({ max: 15 }).map((pick): Pick => ({ pick }));
/** A new volume by name, or (now and then) the retry of a killed create or a deleted name used again. */
const create = fc.record({
  kind: fc.constant('create' as const),
  volume: fc.oneof({ weight: 3, arbitrary: named }, { weight: 1, arbitrary: picked }),
  large: fc.boolean(),
});
const onKnown = <K extends 'restore' | 'delete' | 'cleanup-delete'>(kind: K) =>
  fc.record({ kind: fc.constant(kind), volume: picked });
const killCreate = fc.record({ kind: fc.constant('kill-create' as const), volume: named });
const concurrentCall: fc.Arbitrary<VolumeCall<Aim>> = fc.oneof(create, onKnown('restore'), onKnown('delete'));

const stepArbitrary: fc.Arbitrary<Step<Aim>> = fc.oneof(
  { weight: 5, arbitrary: create },
  { weight: 3, arbitrary: onKnown('delete') },
  { weight: 2, arbitrary: onKnown('restore') },
  { weight: 1, arbitrary: onKnown('cleanup-delete') },
  { weight: 2, arbitrary: killCreate },
  {
    weight: 2,
    arbitrary: fc
      .array(concurrentCall, { minLength: 2, maxLength: 3 })
      .map((calls): Step<Aim> => ({ kind: 'together', calls })),
  },
  { weight: 1, arbitrary: fc.constant<Step<Aim>>({ kind: 'restart' }) },
  {
    weight: 2,
    // Half of them past ten, where string order and scans break.
    arbitrary: fc
      .oneof(fc.integer({ min: 1, max: MAX_FILL }), fc.integer({ min: 10, max: MAX_FILL }))
      .map((count): Step<Aim> => ({ kind: 'fill', count })),
  },
  { weight: 1, arbitrary: fc.constant<Step<Aim>>({ kind: 'fingerprint' }) },
);

/** Sequences of the agent's calls, shrinkable as fast-check shrinks commands. */
/** Without bias: fast-check would start with very short sequences, and a budget of seconds allows few runs. */
export const sequences = fc.noBias(
  fc.commands([stepArbitrary.map((step) => new StepCommand(step))], {
    maxCommands: MAX_STEPS,
    size: 'medium',
  }),
);
