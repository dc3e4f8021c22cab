import { constants } from 'node:fs';
import { access, lstat, open, stat } from 'node:fs/promises';
import { O_PATH, describeFileType, diagnoseExecutable, execKind } from '@dhv/sdk/client';
import { DhvError } from '../errors/dhv-error.js';

/** The plugin named on the command line is not there: nothing can be checked, so one error says it instead of a failure and a skip for every check. */
export class PluginMissingError extends DhvError {
  readonly code = 'PLUGIN_NOT_FOUND';
  constructor(readonly plugin: string) {
    super(
      `${plugin} does not exist: give dhv check the path of the plugin executable, e.g. dhv check ./dist/my-plugin`,
      {
        plugin,
      },
    );
  }
}

/** The plugin is there but execve would refuse it: as with a missing one, one error with the reason and the fix. */
export class PluginNotRunnableError extends DhvError {
  readonly code = 'PLUGIN_NOT_EXECUTABLE';
  constructor(
    readonly plugin: string,
    readonly reason: string,
    fix: string,
  ) {
    super(`${plugin} cannot be run: ${reason}; ${fix}`, { plugin, reason });
  }
}

const GIVE_THE_FILE = 'give dhv check the path of the plugin executable, e.g. dhv check ./dist/my-plugin';
const WORKING_SHEBANG =
  'begin it with a #! line naming an absolute path that exists, e.g. #!/bin/sh (an agent has no PATH)';

/**
 * Throws PluginMissingError when nothing is at `plugin`, PluginNotRunnableError when what is
 * there cannot be started (a directory, no execute bit, no or a broken #! line): each
 * would fail discovery.executable or the first run and skip every other check after it.
 */
export async function assertPluginRunnable(plugin: string): Promise<void> {
  try {
    await lstat(plugin);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new PluginMissingError(plugin);
    return;
  }
  const target = await stat(plugin).catch(() => undefined);
  if (!target)
    throw new PluginNotRunnableError(plugin, 'it is a symbolic link to something that does not exist', GIVE_THE_FILE);
  if (!target.isFile())
    throw new PluginNotRunnableError(
      plugin,
      `it is ${describeFileType(target) ?? 'not a regular file'}`,
      GIVE_THE_FILE,
    );
  if ((target.mode & 0o111) === 0)
    throw new PluginNotRunnableError(
      plugin,
      `it has no execute bit (mode ${(target.mode & 0o777).toString(8)})`,
      `chmod +x ${plugin}`,
    );
  if (!(await executable(plugin)))
    throw new PluginNotRunnableError(
      plugin,
      "dhv's user may not execute it",
      'run dhv check as a user who may, or chmod it',
    );
  const refusal = await execRefusal(plugin);
  if (refusal) throw new PluginNotRunnableError(plugin, refusal.why, refusal.fix ?? WORKING_SHEBANG);
  // The SDK's diagnosis, as every run of the plugin reports it: CRLF, a missing interpreter or loader.
  const diagnosis = diagnoseExecutable(plugin);
  if (diagnosis) throw new PluginNotRunnableError(plugin, diagnosis.reason, diagnosis.fix);
}

const executable = (path: string) =>
  access(path, constants.X_OK).then(
    () => true,
    () => false,
  );

/** Why execve would refuse a regular file (neither a sound ELF program for this host nor a #! script), or undefined. */
async function execRefusal(plugin: string): Promise<{ why: string; fix?: string } | undefined> {
  const handle = await open(plugin, O_PATH).catch(() => undefined);
  if (!handle) return undefined;
  try {
    const kind = execKind(handle.fd, await handle.stat());
    return kind.kind === 'refused' ? kind : undefined;
  } finally {
    await handle.close();
  }
}
