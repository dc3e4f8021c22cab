import { lstat } from 'node:fs/promises';
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

/** Throws PluginMissingError when nothing is at `plugin` (a file that is there but cannot run is for discovery.executable to judge). */
export async function assertPluginExists(plugin: string): Promise<void> {
  try {
    await lstat(plugin);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new PluginMissingError(plugin);
  }
}
