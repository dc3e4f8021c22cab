import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';

/** A temp directory of throw-away plugin executables, removed (with anything they left running) by cleanup(). */
export class PluginDir {
  private constructor(readonly path: string) {}

  static async create(prefix = 'dhv-sdk-test-'): Promise<PluginDir> {
    return new PluginDir(await mkdtemp(join(tmpdir(), prefix)));
  }

  /** Writes an executable bash plugin; `body` runs with no PATH, as under an agent. */
  async bash(name: string, body: string, mode = 0o755): Promise<string> {
    return this.file(name, `#!/bin/bash\n${body}\n`, mode);
  }

  /** Writes an executable plugin run by this very node, as a bundled SDK plugin is. */
  async node(name: string, body: string, mode = 0o755): Promise<string> {
    return this.file(name, `#!${process.execPath}\n${body}\n`, mode);
  }

  async file(name: string, text: string, mode = 0o644): Promise<string> {
    const path = join(this.path, name);
    await writeFile(path, text);
    await chmod(path, mode);
    return path;
  }

  join(name: string): string {
    return join(this.path, name);
  }

  async cleanup(): Promise<void> {
    await rm(this.path, { recursive: true, force: true });
  }
}

/**
 * A fresh plugin dir and a second one outside it for each test (beforeEach), handed to
 * `use`, and both removed after the test (afterEach).
 */
export function usePluginDirs(use: (dir: PluginDir, outside: PluginDir) => void): void {
  let dirs: PluginDir[] = [];
  beforeEach(async () => {
    const [dir, outside] = [await PluginDir.create(), await PluginDir.create()];
    dirs = [dir, outside];
    use(dir, outside);
  });
  afterEach(async () => {
    for (const d of dirs.splice(0)) await d.cleanup();
  });
}
