import { chmod, copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HOSTILE_FIXTURES } from './checkout-paths.js';
import { killAll, recordedPids } from './processes.js';

/**
 * Hostile fixtures installed into a plugin dir, each recording the PIDs it starts in
 * `<file>.pids`; `killLeftovers()` (in afterEach) kills whatever a failed assertion left running.
 */
export class HostileInstaller {
  private readonly pidFiles: string[] = [];

  /** Copies a fixture into `pluginDir` under `id` (default: its name without `.sh`) and returns its path. */
  async install(pluginDir: string, fixture: string, id = fixture.replace(/\.sh$/, '')): Promise<string> {
    const file = join(pluginDir, id);
    await copyFile(join(HOSTILE_FIXTURES, fixture), file);
    await chmod(file, 0o755);
    this.track(`${file}.pids`);
    return file;
  }

  /** Also watches PID files of fixtures installed by hand (a symlink, a copy outside the plugin dir). */
  track(...pidFiles: string[]): void {
    this.pidFiles.push(...pidFiles);
  }

  /** Every PID the watched fixtures recorded so far. */
  async recorded(): Promise<number[]> {
    return (await Promise.all(this.pidFiles.map(recordedPids))).flat();
  }

  async killLeftovers(): Promise<void> {
    for (const file of this.pidFiles.splice(0)) killAll(await recordedPids(file));
  }
}
