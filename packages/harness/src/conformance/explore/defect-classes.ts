import type { Step, VolumeCall } from './recipe.js';
import type { ExploreCheckId } from './verdicts.js';

/**
 * The defect classes of the harness README ("Defect classes the explorer names"), each as
 * the README words it: a finding names one, so a user reads what kind of defect it is.
 */
export const DEFECT_CLASSES = {
  'shared-storage':
    'two live volumes are given one path, or one inside the other: a freed slot handed out again while another volume holds it, long names cut to one',
  'many-volumes': 'a create fails once the node holds many volumes: the eleventh, numbered in string order',
  'name-not-reusable':
    'a create of a name is refused: after that name was deleted, or while another name it is a prefix of exists',
  'delete-takes-others':
    'a delete removes or empties another live volume: a sweep by prefix, a namespace folder removed while it still holds a volume',
  'create-takes-others': 'a create empties or removes another live volume',
  'restore-empties':
    'a restore (the saved create request again, alone or for every volume at once at an agent restart) empties the volume or returns another path: a capacity or parameter compared wrongly, a rebuild under a temporary name, records lost while every volume was restored at once',
  'restore-fails':
    'a restore fails, every time or some of the time, and the volume is left off the node: a name guard that a longer name trips, a mount check that a large mount table fools',
  'killed-create-blocks':
    "a create killed at the agent's deadline leaves what makes its retry fail: a lock an EXIT trap never released, a half-written image",
  'cleanup-delete-wipes': 'the cleanup delete (empty name and namespace) removes other volumes or their records',
  'slow-fingerprint': 'fingerprint slows with the number of volumes until it misses its 1 s deadline',
  'host-resources-kept': 'a delete succeeds but leaves a loop device or a mount of the volume on the host',
  'call-fails': "another call of a normal agent's life fails",
  leftovers: 'files of deleted volumes are left in the volumes dir (cosmetic: a leak of disk space)',
} as const;
export type DefectClass = keyof typeof DEFECT_CLASSES;

/** Where a break was seen: the step of the recipe (or of the steps every run ends with), and the call that broke, when one did. */
export interface BrokenAt {
  step?: Step | undefined;
  call?: VolumeCall | undefined;
}

/** The class of a break of `checkId`, from where it broke and the recipe that led there. */
export function classify(checkId: ExploreCheckId, steps: readonly Step[], at: BrokenAt | undefined): DefectClass {
  switch (checkId) {
    case 'explore.volumes-distinct':
      return 'shared-storage';
    case 'explore.fingerprint-fast':
      return 'slow-fingerprint';
    case 'explore.releases-host-resources':
      return 'host-resources-kept';
    case 'explore.nothing-left':
      return 'leftovers';
    case 'explore.calls-succeed':
      return callFailed(steps, at);
    case 'explore.volumes-survive':
      return dataLost(steps, at);
  }
}

function callFailed(steps: readonly Step[], at: BrokenAt | undefined): DefectClass {
  const call = at?.call;
  if (call === undefined) return 'call-fails';
  const killed = steps.flatMap(callsOf).some((c) => c.kind === 'kill-create' && sameVolume(c, call));
  if (call.kind === 'kill-create' || killed) return 'killed-create-blocks';
  if (call.kind === 'restore') return 'restore-fails';
  if (call.kind !== 'create') return 'call-fails';
  // A recipe is tightened until every step is needed: a fill in it is why the create failed.
  if (steps.some((step) => step.kind === 'fill')) return 'many-volumes';
  // Its name deleted before, or a name it is a prefix of (or that is one of it) in its namespace.
  const related = steps
    .flatMap(callsOf)
    .some((c) =>
      sameVolume(c, call)
        ? c.kind === 'delete' || c.kind === 'cleanup-delete'
        : c.volume.namespace === call.volume.namespace &&
          (c.volume.name.startsWith(call.volume.name) || call.volume.name.startsWith(c.volume.name)),
    );
  return related ? 'name-not-reusable' : 'call-fails';
}

function dataLost(steps: readonly Step[], at: BrokenAt | undefined): DefectClass {
  const kinds = at?.step === undefined ? [] : callsOf(at.step).map((c) => c.kind);
  const restored = at?.step?.kind === 'restart' || kinds.includes('restore');
  // A loss that shows at a restore, after a cleanup delete the recipe needs, is the cleanup delete's.
  const cleanup = steps.some((step) => callsOf(step).some((c) => c.kind === 'cleanup-delete'));
  if (kinds.includes('cleanup-delete') || (restored && cleanup)) return 'cleanup-delete-wipes';
  if (restored) return 'restore-empties';
  if (kinds.includes('delete')) return 'delete-takes-others';
  if (kinds.includes('kill-create')) return 'killed-create-blocks';
  return 'create-takes-others';
}

function callsOf(step: Step): VolumeCall[] {
  if (step.kind === 'together') return step.calls;
  return 'volume' in step ? [step] : [];
}

const sameVolume = (a: VolumeCall, b: VolumeCall) =>
  a.volume.namespace === b.volume.namespace && a.volume.name === b.volume.name;
