import { LONG_STEM } from './pool.js';
import { CONDITION_CLASSES, type DefectClass } from './defect-classes.js';
import {
  VOLUMES_DIR_CONDITIONS,
  type Step,
  type VolumeCall,
  type VolumeKey,
  type VolumesDirCondition,
} from './recipe.js';
import { KILL_EVENTS, type KillEvent } from './kill-events.js';

export interface Scenario {
  /** The classes it is built to expose; a scenario may serve two whose calls are the same. */
  classes: DefectClass[];
  steps: Step[];
  /**
   * Its first step asks for something a plugin may rightly refuse (parameters it does not
   * take): a failure there means the scenario does not apply, not a defect.
   */
  probe?: boolean;
  /** It is aimed or judged by time (a kill point, a deadline): it runs with no other scenario beside it. */
  alone?: boolean;
}

/** What the phase measured of the plugin before its scenarios: the times they are aimed by. */
export interface PluginPace {
  /** A typical create of a new volume. */
  createMs: number;
  /** A delete of a volume holding VOLUME_DATA. */
  deleteWithDataMs: number;
}

/** Where in the plugin's own create time the killed creates are killed: early, middle, just before it answers. */
export const KILL_POINTS = [0.1, 0.5, 0.9] as const;

/** The parameters of the built-in mkdir plugin (Nomad's `mkdir`), each set given a value no default has. */
export function mkdirParameterSets(uid: number | undefined, gid: number | undefined): Record<string, string>[] {
  // As root, the owner `nobody`; else the user's own, the only one a plugin run by it can give.
  const owner = (id: number | undefined) => String(id === 0 || id === undefined ? 65534 : id);
  const all = { mode: '0700', uid: owner(uid), gid: owner(gid) };
  return [{ mode: all.mode }, { uid: all.uid }, { gid: all.gid }, all];
}

const v = (name: string, namespace = 'default'): VolumeKey => ({ namespace, name });
const create = (name: string, namespace?: string): Step => ({
  kind: 'create',
  volume: v(name, namespace),
  large: false,
});
const on = (kind: 'delete' | 'restore' | 'cleanup-delete' | 'write', name: string, namespace?: string): Step => ({
  kind,
  volume: v(name, namespace),
});
const ms = (n: number) => Math.max(1, Math.round(n));

/**
 * How many restores run under the crowded mount table: a check it fools only some of the
 * time is met within them (the mkfs demo's fails about nine restores in ten under that table:
 * eight all pass about once in 10^8). The create's own marker is the data they must keep.
 */
export const CROWDED_RESTORES = 8;

/**
 * One scenario per class, aimed by the plugin's measured pace; the restore with parameters
 * once per set of `parameterSets`. `crowded`: whether this host can run a call under a
 * crowded mount table (crowded-table.ts, as root); when not, restore-fails is left to the
 * restarts of restart-lost-update's scenario alone.
 */
export function scenarios(
  pace: PluginPace,
  parameterSets: Record<string, string>[],
  {
    crowded,
    volumesDirs,
  }: {
    crowded: boolean;
    /** The volumes dir conditions this host can make (host-conditions.ts). */
    volumesDirs: readonly VolumesDirCondition[];
  } = { crowded: true, volumesDirs: VOLUMES_DIR_CONDITIONS },
): Scenario[] {
  return [
    { classes: ['slot-reuse'], steps: [create('db'), create('web'), on('delete', 'db'), create('db-1')] },
    { classes: ['guard-leak'], steps: [create('db'), on('delete', 'db'), create('db')] },
    {
      classes: ['guard-prefix', 'delete-prefix-sweep'],
      steps: [create('db-backup'), create('db-1'), create('db-10'), create('db'), on('delete', 'db')],
    },
    { classes: ['restore-rebuilds'], steps: [{ kind: 'create', volume: v('db'), large: true }, on('restore', 'db')] },
    {
      // Its restarts' restores may fail too: a restore's failure there is restore-fails.
      classes: ['restart-lost-update', 'restore-fails'],
      steps: [
        create('db'),
        create('web'),
        create('db', 'prod'),
        create('db', 'dev'),
        { kind: 'restart' },
        { kind: 'restart' },
      ],
    },
    ...(crowded
      ? [
          {
            classes: ['restore-fails'],
            steps: [
              create('db'),
              ...Array.from({ length: CROWDED_RESTORES }, (): Step => ({
                kind: 'restore',
                volume: v('db'),
                crowded: true,
              })),
            ],
          } satisfies Scenario,
        ]
      : []),
    {
      classes: ['cleanup-wipes-records'],
      steps: [create('db'), create('db', 'prod'), on('cleanup-delete', 'db'), { kind: 'restart' }],
    },
    { classes: ['name-truncation'], steps: [create(`${LONG_STEM}a`), create(`${LONG_STEM}b`)] },
    ...volumesDirs.map((condition): Scenario => ({
      classes: [CONDITION_CLASSES[condition]],
      steps: [{ kind: 'volumes-dir', condition }, ...UNDER_A_CONDITION],
    })),
    ...parameterSets.map((parameters): Scenario => ({
      classes: ['restore-with-parameters'],
      steps: [{ kind: 'create', volume: v('db'), large: false, parameters }, on('write', 'db'), on('restore', 'db')],
      probe: true,
    })),
    // The eleventh volume, then a fingerprint with eleven.
    {
      classes: ['string-order', 'fingerprint-scan'],
      steps: [{ kind: 'fill', count: 11 }, { kind: 'fingerprint' }],
      alone: true,
    },
    {
      classes: ['killed-create-lock'],
      steps: [{ kind: 'kill-create', volume: v('db') }, on('delete', 'db'), create('db')],
      alone: true,
    },
    // Aimed by what the plugin does, not by time, they run beside each other; after the kill at
    // the deadline (a lock it leaves is that class's), before the kills by time, as they land
    // where the plugin's own steps are, where a kill by time lands by chance.
    ...KILL_EVENTS.map((event): Scenario => ({ classes: ['killed-create-part-way'], steps: killedAt(event) })),
    { classes: ['killed-create-part-way'], steps: killedPartWay(pace), alone: true },
    { classes: ['delete-overlaps-create'], steps: deleteOverlapsCreate(pace), alone: true },
  ];
}

/** At each kill point a create killed, the agent's retry, its delete, and a create of the same name. */
function killedPartWay(pace: PluginPace): Step[] {
  return KILL_POINTS.flatMap((point, i) => {
    const name = ['db', 'web', 'db-1'][i]!;
    return [
      { kind: 'kill-create', volume: v(name), killAtMs: ms(pace.createMs * point) },
      on('delete', name),
      create(name),
    ] satisfies Step[];
  });
}

/** The calls a volumes dir made under a host condition is put through: every kind a volume's life has. */
const UNDER_A_CONDITION: Step[] = [
  create('db'),
  create('web'),
  on('write', 'db'),
  on('restore', 'db'),
  on('delete', 'web'),
];

/** A create killed at the plugin's first `event` (kill-events.ts), then as killedPartWay. */
function killedAt(event: KillEvent): Step[] {
  return [{ kind: 'kill-create', volume: v('db'), killAt: event }, on('delete', 'db'), create('db')];
}

/**
 * A delete of a volume holding data overlapped with a create of another in its namespace,
 * both ways round: the create started while the delete removes the data, and the delete
 * started while the create runs.
 */
function deleteOverlapsCreate(pace: PluginPace): Step[] {
  const call = (kind: 'create' | 'delete', name: string, namespace: string, startAfterMs?: number): VolumeCall => ({
    ...(kind === 'create' ? { kind, volume: v(name, namespace), large: false } : { kind, volume: v(name, namespace) }),
    ...(startAfterMs === undefined ? {} : { startAfterMs }),
  });
  return [
    create('db', 'prod'),
    on('write', 'db', 'prod'),
    {
      kind: 'together',
      calls: [call('delete', 'db', 'prod'), call('create', 'web', 'prod', ms(pace.deleteWithDataMs / 3))],
    },
    create('db', 'dev'),
    on('write', 'db', 'dev'),
    { kind: 'together', calls: [call('create', 'web', 'dev'), call('delete', 'db', 'dev', ms(pace.createMs / 2))] },
  ];
}
