/**
 * The steps of a create, in order. Tests build the plugin with a hook that fails after a
 * chosen step (a build-time seam: the shipped plugin has no way to ask for it).
 */
export const CREATE_STEPS = [
  'image',
  'preallocate',
  'filesystem',
  'loop-device',
  'mount-point',
  'mount',
  'root-directory',
  'grow-image',
  'grow-filesystem',
] as const;
export type CreateStep = (typeof CREATE_STEPS)[number];

export type StepHook = (step: CreateStep) => void | Promise<void>;

export const noHook: StepHook = () => {};
