import type { Step, VolumeCall, VolumesDirCondition } from './recipe.js';
import type { ExploreCheckId } from './verdicts.js';

/**
 * The defect classes of the harness README ("Defect classes", in the explore section), each
 * as the README words it: a way a stateful plugin breaks under a sequence of the agent's
 * calls. The systematic phase drives each on purpose (scenarios.ts: one scenario per class,
 * but those every scenario judges), and every finding names the class it shows.
 */
export const DEFECT_CLASSES = {
  'slot-reuse':
    'a freed slot or number handed out while another volume still holds it, so a create is given, or empties, a live volume (`create db; create web; delete db; create db-1`)',
  'string-order': 'the eleventh volume numbered after the last a glob lists in string order, and refused (`fill 11`)',
  'guard-leak':
    'a name guard never released, so a name cannot be used again after its delete (`create db; delete db; create db`)',
  'guard-prefix':
    'a name guard matching by prefix, so `db` is refused beside `db-backup` (`create db-backup; create db-1; create db-10; create db`)',
  'delete-prefix-sweep':
    'a delete that removes by prefix, so deleting `db` removes `db-1` and `db-10` (the same scenario, then `delete db`)',
  'restore-rebuilds': 'a restore that rebuilds a volume created with a capacity, empty (`create db large; restore db`)',
  'restart-lost-update':
    'a record lost when every volume is restored at once, at an agent restart (four volumes, two restarts)',
  'killed-create-lock':
    "a create killed at the agent's deadline leaves a lock an EXIT trap never released, which blocks its retry (`kill-create db; delete db; create db`)",
  'killed-create-part-way':
    'a create killed early, half way or just before it answers leaves what blocks its retry (a half-written image): at each of the three kill points, the retry, a delete and a create of the same name; the same at its first write, rename and mount, where they can be seen (`kill-create db at write; delete db; create db`)',
  'cleanup-wipes-records':
    "the cleanup delete's empty name and namespace wiping other volumes or every record (`create db; create prod/db; cleanup-delete db; restart`)",
  'fingerprint-scan': 'a fingerprint that grows with the volumes and misses its 1 s deadline (`fill 11; fingerprint`)',
  'name-truncation': 'names cut to 64 characters, so two long names share a directory (two names of 72 characters)',
  'long-volumes-dir':
    "a volumes dir whose path is long, as a client's deep data dir makes it, breaks a call or mixes volumes: a fixed-width field, a 108-byte socket path, a column cut short (`volumes-dir long; create db; create web; write db; restore db; delete web`, a volumes dir of 255 characters)",
  'volumes-dir-other-fs':
    'a volumes dir on another filesystem than /tmp breaks a plugin that builds a volume under /tmp and renames or links it into place, which fails with EXDEV (the same calls after `volumes-dir other-fs`: a tmpfs dhv mounts at the volumes dir; as root only)',
  'volumes-dir-shared':
    "a volumes dir that holds other plugins' volumes, as a client's does, breaks a call, or a call removes or changes one of them: a sweep of folders the plugin has no record of, a count of the dir's entries (the same calls after `volumes-dir shared`: 24 folders named by volume IDs, each holding a file)",
  'delete-overlaps-create':
    'a delete of a volume holding data overlapped with a create of another volume in its namespace, both ways round, removes the new one with the namespace folder (`create prod/db; write prod/db; delete prod/db + create prod/web after 40ms`)',
  'restore-with-parameters':
    "a restore of a volume created with non-default parameters, holding data, rebuilds it empty: each of the built-in mkdir's `mode=0700`, `uid`, `gid` (`nobody`'s as root), all three, and the user's own `--param`s (`create db mode=0700; write db; restore db`)",
  'restore-fails':
    "a restore fails, every time or some of the time, and the volume is left off the node: a mount check that a large mount table fools (`create db` and eight restores under a mount table crowded as a real client's, `restore db crowded`; as root only, else the restarts of restart-lost-update's scenario)",
  'host-resources-kept':
    'a delete succeeds but leaves a loop device or a mount of the volume on the host (every scenario ends with the delete of every volume)',
  'call-fails': "another call of a normal agent's life fails (every scenario's calls)",
  leftovers:
    "files of deleted volumes are left in the volumes dir, cosmetic: a leak of disk space (every scenario's deletes)",
} as const;
export type DefectClass = keyof typeof DEFECT_CLASSES;

/** The class each host condition of the volumes dir (`volumes-dir CONDITION`) drives. */
export const CONDITION_CLASSES: Record<VolumesDirCondition, DefectClass> = {
  long: 'long-volumes-dir',
  'other-fs': 'volumes-dir-other-fs',
  shared: 'volumes-dir-shared',
};

/** The classes no scenario of their own drives: every scenario's calls and deletes judge them. */
export const JUDGED_BY_EVERY_SCENARIO: readonly DefectClass[] = ['host-resources-kept', 'call-fails', 'leftovers'];

/** Where a break was seen: the step of the recipe (or of the steps every run ends with), and the call that broke, when one did. */
export interface BrokenAt {
  step?: Step | undefined;
  call?: VolumeCall | undefined;
}

/** The class of a break of `checkId`, from where it broke and the recipe that led there. */
export function classify(checkId: ExploreCheckId, steps: readonly Step[], at: BrokenAt | undefined): DefectClass {
  // A recipe is tightened until every step is needed: a host condition in it decided the break.
  const condition = steps.find((step) => step.kind === 'volumes-dir');
  if (condition !== undefined) return CONDITION_CLASSES[condition.condition];
  switch (checkId) {
    case 'explore.volumes-distinct':
      return steps.flatMap(callsOf).some((c) => c.volume.name.length > 64) ? 'name-truncation' : 'slot-reuse';
    case 'explore.fingerprint-fast':
      return 'fingerprint-scan';
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
  const kill = steps.flatMap(callsOf).find((c) => c.kind === 'kill-create' && sameVolume(c, call));
  if (call.kind === 'kill-create' || kill !== undefined) {
    const killed = kill?.kind === 'kill-create' ? kill : call.kind === 'kill-create' ? call : undefined;
    return killed?.killAtMs === undefined && killed?.killAt === undefined
      ? 'killed-create-lock'
      : 'killed-create-part-way';
  }
  if (call.kind === 'restore') return 'restore-fails';
  if (call.kind !== 'create') return 'call-fails';
  // A recipe is tightened until every step is needed: a fill in it is why the create failed.
  if (steps.some((step) => step.kind === 'fill')) return 'string-order';
  const before = steps.flatMap(callsOf);
  if (before.some((c) => sameVolume(c, call) && (c.kind === 'delete' || c.kind === 'cleanup-delete')))
    return 'guard-leak';
  // A name it is a prefix of (or that is one of it) in its namespace.
  const prefixed = before.some(
    (c) =>
      !sameVolume(c, call) &&
      c.volume.namespace === call.volume.namespace &&
      (c.volume.name.startsWith(call.volume.name) || call.volume.name.startsWith(c.volume.name)),
  );
  return prefixed ? 'guard-prefix' : 'call-fails';
}

function dataLost(steps: readonly Step[], at: BrokenAt | undefined): DefectClass {
  const calls = at?.step === undefined ? [] : callsOf(at.step);
  const kinds = calls.map((c) => c.kind);
  const restart = at?.step?.kind === 'restart';
  // A loss that shows at a restore, after a cleanup delete the recipe needs, is the cleanup delete's.
  const cleanup = steps.some((step) => callsOf(step).some((c) => c.kind === 'cleanup-delete'));
  if (kinds.includes('cleanup-delete') || ((restart || kinds.includes('restore')) && cleanup))
    return 'cleanup-wipes-records';
  if (restart) return 'restart-lost-update';
  if (kinds.includes('restore')) {
    const restored = calls.find((c) => c.kind === 'restore')!;
    const made = steps.flatMap(callsOf).find((c) => c.kind === 'create' && sameVolume(c, restored));
    return made?.kind === 'create' && made.parameters !== undefined ? 'restore-with-parameters' : 'restore-rebuilds';
  }
  if (kinds.includes('delete')) return kinds.includes('create') ? 'delete-overlaps-create' : 'delete-prefix-sweep';
  if (kinds.includes('kill-create')) return 'killed-create-part-way';
  return 'slot-reuse';
}

function callsOf(step: Step): VolumeCall[] {
  if (step.kind === 'together') return step.calls;
  return 'volume' in step && step.kind !== 'write' ? [step] : [];
}

const sameVolume = (a: VolumeCall, b: VolumeCall) =>
  a.volume.namespace === b.volume.namespace && a.volume.name === b.volume.name;
