import type { GcReport, Orphan } from '../agent/orphans.js';
import { short } from './format-volume.js';

/** One orphan in `dhv agent gc --json`, with the command that removes it. */
export function orphanJson(o: Orphan, again: string) {
  return {
    ID: o.id,
    Name: o.name ?? '',
    Kind: o.kind,
    Paths: o.paths,
    PluginID: o.plugin ?? '',
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
    lines.push(
      `  ${short(o.id)}  ${o.kind}${o.name ? `, name "${o.name}"` : ''}${o.plugin ? `, plugin ${o.plugin}` : ''}${status}`,
    );
    for (const p of o.paths) lines.push(`      ${p}`);
    if (failed.has(o.id)) lines.push(`      ${failed.get(o.id)!.message}`);
    else if (o.blocker) lines.push(`      cannot be removed by gc: ${o.blocker}`);
    else if (!removing) lines.push(`      remove it: ${again} --id ${o.id}`);
  }
  if (!removing) lines.push(`==> Remove them all: ${again}`);
  else lines.push(`==> Removed ${report.removed.length} of ${report.orphans.length}`);
  return lines.join('\n');
}
