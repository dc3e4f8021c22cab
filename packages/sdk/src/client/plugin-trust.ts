import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Warnings for a plugin dir, or a plugin file, that a user other than the agent's can
 * write. A script plugin is run by its path, as Nomad runs it, so between dhv's look at
 * the file and the kernel reading its `#!` line whoever can write there can swap it: the
 * only defence is that nobody else can write there. Nomad runs such a plugin, so dhv
 * does too, and says so, naming the command that closes the gap.
 */
export async function writableByOthers(paths: readonly string[], uid = process.getuid?.()): Promise<string[]> {
  const warnings: string[] = [];
  for (const path of paths) {
    const info = await stat(path).catch(() => undefined);
    if (!info) continue;
    const who: string[] = [];
    if (uid !== undefined && info.uid !== uid && (info.mode & 0o200) !== 0) who.push(`its owner (uid ${info.uid})`);
    if ((info.mode & 0o020) !== 0) who.push(`group ${info.gid}`);
    if ((info.mode & 0o002) !== 0) who.push('every user');
    if (who.length === 0) continue;
    const fix = [
      ...(uid !== undefined && info.uid !== uid ? [`chown ${uid} ${path}`] : []),
      ...((info.mode & 0o022) !== 0 ? [`chmod go-w ${path}`] : []),
    ].join(' && ');
    const what = info.isDirectory() ? 'the plugin dir' : 'the plugin';
    warnings.push(
      `${what} ${path} (mode ${(info.mode & 0o7777).toString(8).padStart(4, '0')}) can be written by ${who.join(', ')}, not only by this agent's user: ` +
        `whoever can write it can swap a plugin between dhv's check and its run, and run code as this agent; fix: ${fix}`,
    );
  }
  return warnings;
}

/** The warnings for one plugin executable and the folder it is in. */
export function pluginTrustWarnings(executable: string): Promise<string[]> {
  return writableByOthers([dirname(executable), executable]);
}
