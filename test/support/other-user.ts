import { chmod, copyFile } from 'node:fs/promises';
import { statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { REPO_ROOT } from './checkout-paths.js';
import { inPrivateMountNamespace } from './private-mount-namespace.js';
import { root, tool, type Requirement } from './requirements.js';
import { removeTempDir, tempDir } from './temp-dir.js';

/** The unprivileged user the tests run things as. */
export const NOBODY = { uid: 65534, gid: 65534 } as const;
const SETPRIV = '/usr/bin/setpriv';

/**
 * A checkout in a private folder (`/root/x`, a `mktemp -d` folder) cannot be reached by
 * another user. Files that user must run are copied into a world-readable temporary
 * folder instead; `remove()` deletes it.
 */
export interface StagedFiles {
  dir: string;
  /** The staged copy of each file given, by its base name. */
  path(name: string): string;
  remove(): Promise<void>;
}

export async function stageForOtherUser(files: readonly string[]): Promise<StagedFiles> {
  const dir = await tempDir('staged');
  await chmod(dir, 0o755);
  for (const file of files) {
    const target = join(dir, basename(file));
    await copyFile(file, target);
    await chmod(target, 0o755);
  }
  return { dir, path: (name) => join(dir, name), remove: () => removeTempDir(dir) };
}

/**
 * What running the whole checkout as another user needs: root (to switch user and to
 * bind-mount the checkout at a world-reachable path in a private mount namespace),
 * setpriv and unshare, and a checkout whose own folder others may enter (its parents
 * may be private: the bind mount skips them).
 */
export function checkoutViewForOtherUser(): Requirement | undefined {
  const missing = root() ?? tool('setpriv', 'util-linux') ?? tool('unshare', 'util-linux');
  if (missing) return missing;
  const mode = statSync(REPO_ROOT).mode;
  return (mode & 0o005) === 0o005
    ? undefined
    : { missing: `a checkout folder others may enter (chmod o+rx ${REPO_ROOT})` };
}

/**
 * argv that runs `command` as nobody with the checkout bind-mounted at `view` (an empty,
 * world-readable folder), in a private mount namespace that disappears with the process.
 * Paths in `command` that lie in the checkout must be given under `view`.
 */
export function asNobodyInCheckoutView(view: string, command: readonly string[]): [string, string[]] {
  return inPrivateMountNamespace('/usr/bin/mount --bind "$0" "$1" && shift && exec "$@"', [
    REPO_ROOT,
    view,
    SETPRIV,
    `--reuid=${NOBODY.uid}`,
    `--regid=${NOBODY.gid}`,
    '--clear-groups',
    ...command,
  ]);
}

export async function makeView(): Promise<string> {
  const view = await tempDir('view');
  await chmod(view, 0o755);
  return view;
}
