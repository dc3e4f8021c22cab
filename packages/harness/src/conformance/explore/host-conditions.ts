import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mount } from '@dhv/sdk/host';
import type { VolumesDirCondition } from './recipe.js';
import { StepNotPossible } from './violation.js';

/**
 * Host conditions of a real client's volumes dir that a fresh sandbox lacks
 * (VOLUMES_DIR_CONDITIONS), each made by dhv for one run (`volumes-dir CONDITION`, before any
 * volume):
 * - `long`: a path of LONG_VOLUMES_DIR characters, as a client's `/opt/nomad/data/...` with a
 *   deep data dir makes it: a volume's path (the dir, a slash, a UUID) is then past the 108
 *   bytes of a unix socket's path, past a 256-byte buffer, and wider than any column a tool
 *   pads its table to;
 * - `other-fs`: a tmpfs of its own mounted at the volumes dir, so that it is another
 *   filesystem than /tmp, where a plugin may build a volume before it moves it into place (a
 *   rename(2) or a link then fails with EXDEV). The mount is inside the check's sandbox and is
 *   undone with it (forceRemove, and the cleanup journal should dhv die). It is on the host's
 *   table, not in a namespace of dhv's own: the plugin's calls, their mounts and dhv's look at
 *   the volumes must all see one tree. As root only: no one else may mount;
 * - `shared`: NEIGHBOURS volumes of other plugins already in the dir, as on a client where the
 *   built-in mkdir and other plugins share the volumes dir: folders named by their volume IDs,
 *   each holding a file. A call must work beside them and leave every one as it was.
 */
export const LONG_VOLUMES_DIR = 255;
/** How many volumes of other plugins a shared volumes dir holds. */
export const NEIGHBOURS = 24;
/** The file each neighbour holds: its own ID. */
const NEIGHBOUR_FILE = 'owner';

/** The other filesystem's size: volumes on it hold markers, VOLUME_DATA and sparse images. */
const OTHER_FS_SIZE = '512m';

/** Whether the condition can be made here, and when not, why. */
export function conditionUnavailable(condition: VolumesDirCondition): string | undefined {
  if (condition === 'other-fs' && process.getuid?.() !== 0)
    return 'a volumes dir on another filesystem is a tmpfs dhv mounts, as root only';
  return undefined;
}

/** A volumes dir made under a condition: where it is, the condition in a verdict's words, and what a call did to it. */
export interface ConditionedVolumesDir {
  dir: string;
  words: string;
  /** What the calls so far did to what the condition put in the dir, in words; undefined when it is as it was. */
  harm(): Promise<string | undefined>;
}

/** Makes the volumes dir of `condition` below `base` (a fresh run's volumes dir). */
export async function volumesDirUnder(condition: VolumesDirCondition, base: string): Promise<ConditionedVolumesDir> {
  const dir = await makeVolumesDir(condition, base);
  return {
    dir,
    words: await conditionWords(condition, dir),
    harm: async () => (condition === 'shared' ? neighbourHarmed(dir) : undefined),
  };
}

async function makeVolumesDir(condition: VolumesDirCondition, base: string): Promise<string> {
  const why = conditionUnavailable(condition);
  if (why !== undefined) throw new StepNotPossible(`"volumes-dir ${condition}" cannot run here: ${why}`);
  if (condition === 'long') {
    const dir = longPath(base, LONG_VOLUMES_DIR);
    await mkdir(dir, { recursive: true });
    return dir;
  }
  if (condition === 'shared') {
    const dir = join(base, 'shared');
    for (const id of neighbourIds()) {
      await mkdir(join(dir, id), { recursive: true, mode: 0o700 });
      await writeFile(join(dir, id, NEIGHBOUR_FILE), id);
    }
    return dir;
  }
  const dir = join(base, 'other-fs');
  await mkdir(dir);
  await mount('dhv-other-fs', dir, 'tmpfs', [`size=${OTHER_FS_SIZE}`, 'mode=0755']);
  return dir;
}

/** The other plugins' volume IDs: UUIDs, as the agent's, that no volume of the run's has. */
function neighbourIds(): string[] {
  return Array.from(
    { length: NEIGHBOURS },
    (_, i) => `0e1a5b0c-${(i + 1).toString(16).padStart(4, '0')}-4000-8000-0000000000aa`,
  );
}

/** What the calls did to the other plugins' volumes of a `shared` volumes dir, in words; undefined when each is as it was. */
async function neighbourHarmed(dir: string): Promise<string | undefined> {
  for (const id of neighbourIds()) {
    const held = await readFile(join(dir, id, NEIGHBOUR_FILE), 'utf8').catch(() => undefined);
    if (held !== id)
      return `another plugin's volume ${id} in the volumes dir (${join(dir, id)}) is ${held === undefined ? 'gone' : 'changed'}`;
  }
  return undefined;
}

/** `base` and folders of a client's data dir below it, to exactly `length` characters. */
function longPath(base: string, length: number): string {
  let dir = base;
  for (let i = 1; dir.length + 1 < length; i++) {
    const segment = `nomad-data-dir-level-${i}-of-a-deep-client-layout`;
    dir = join(dir, segment.slice(0, Math.min(segment.length, length - dir.length - 1)));
  }
  return dir;
}

/** The condition as a verdict names it. */
async function conditionWords(condition: VolumesDirCondition, dir: string): Promise<string> {
  if (condition === 'shared')
    return `when the volumes dir holds ${NEIGHBOURS} volumes of other plugins (folders named by their IDs, as the built-in mkdir makes them)`;
  if (condition === 'long')
    return `when the volumes dir's path is ${dir.length} characters long (a volume's about ${dir.length + 37}), as a client's deep data dir makes it`;
  // The agent gives a plugin no TMPDIR: its temporary files go to /tmp.
  const temp = '/tmp';
  const [here, there] = await Promise.all([stat(dir), stat(temp)]).catch(() => [undefined, undefined]);
  const differ = here === undefined || there === undefined ? '' : ` (device ${here.dev}, ${temp}'s ${there.dev})`;
  return `when the volumes dir is on another filesystem than ${temp}${differ}: a tmpfs dhv mounted there`;
}
