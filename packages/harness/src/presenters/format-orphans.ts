import type { GcReport, Orphan } from '../agent/orphans.js';
import { BUILTIN_MKDIR_ID } from '@dhv/sdk/client';
import { short } from './format-volume.js';

/**
 * The plugin known to have made the orphan: one that left files in its hidden folder.
 * A bare directory at `<volumes dir>/<id>` says nothing of its maker (any plugin may
 * make one); gc removes it as the built-in mkdir's delete would, but did not see mkdir make it.
 */
function maker(o: Orphan): string | undefined {
  if (o.kind === 'directory' && o.plugin === BUILTIN_MKDIR_ID) return undefined;
  return o.plugin;
}

/** One orphan in `dhv agent gc --json`, with the command that removes it. */
export function orphanJson(o: Orphan, again: string) {
  return {
    ID: o.id,
    Name: o.name ?? '',
    Kind: o.kind,
    Paths: o.paths,
    /** The plugin whose delete gc runs on it. */
    PluginID: o.plugin ?? '',
    /** The plugin known to have made it; empty when nothing on disk says. */
    MadeBy: maker(o) ?? '',
    Blocker: o.blocker ?? '',
    RemoveCommand: o.blocker ? '' : `${again} --id ${o.id}`,
  };
}

/** `dhv agent gc`: each orphan with its paths and what to do about it. */
export function gcText(report: GcReport, removing: boolean, again: string): string {
  const head: string[] = [];
  if (report.volumesDirTarget) {
    head.push(`==> The volumes dir ${report.volumesDir} is a symbolic link to ${report.volumesDirTarget}`);
  }
  if (report.freeLocks.length > 0) {
    const what = removing ? ' could not be removed' : `; ${again} removes them`;
    head.push(`==> ${report.freeLocks.length} lock file(s) left by killed holders${what}:`);
    for (const lock of report.freeLocks) head.push(`      ${lock}`);
  }
  if (report.orphans.length === 0) {
    return [...head, `==> No orphaned volumes in ${report.volumesDir}: everything on disk is in client state`].join(
      '\n',
    );
  }
  const lines = [
    ...head,
    `==> ${report.orphans.length} orphaned volume(s) in ${report.volumesDir} (on disk, unknown to client state)`,
  ];
  const failed = new Map(report.failed.map((f) => [f.id, f.error]));
  for (const o of report.orphans) {
    const status = !removing
      ? ''
      : report.removed.includes(o.id)
        ? '  ✓ removed'
        : failed.has(o.id)
          ? '  ✗ not removed'
          : '  (recorded meanwhile, kept)';
    lines.push(`  ${short(o.id)}  ${o.kind}${o.name ? `, name "${o.name}"` : ''}${pluginLabel(o)}${status}`);
    for (const p of o.paths) lines.push(`      ${p}`);
    if (failed.has(o.id)) lines.push(`      ${failed.get(o.id)!.message}`);
    else if (o.blocker) lines.push(`      cannot be removed by gc: ${o.blocker}`);
    else if (!removing) lines.push(`      remove it: ${again} --id ${o.id}`);
  }
  if (removing) lines.push(`==> Removed ${report.removed.length} of ${report.orphans.length}`);
  else lines.push(removeHint(report.orphans, again));
  return lines.join('\n');
}

function pluginLabel(o: Orphan): string {
  const made = maker(o);
  if (made !== undefined) return `, plugin ${made}`;
  if (o.plugin === BUILTIN_MKDIR_ID) return ', plugin not recorded (gc removes it as the built-in mkdir does)';
  return '';
}

/** The closing hint names only what gc can remove: `--remove` on a blocked orphan fails and exits 1. */
function removeHint(orphans: readonly Orphan[], again: string): string {
  const removable = orphans.filter((o) => !o.blocker);
  if (removable.length === orphans.length) return `==> Remove them all: ${again}`;
  if (removable.length === 0)
    return '==> gc can remove none of them: each needs what its line above says (gc --remove would fail and exit 1)';
  return (
    `==> Remove the ${removable.length} gc can remove (the other ${orphans.length - removable.length} need what their lines say): ` +
    `${again} ${removable.map((o) => `--id ${o.id}`).join(' ')}`
  );
}
