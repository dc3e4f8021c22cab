import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findTool, runTool, SYSTEM_DIRS } from './system-tools.js';
import { PluginFailure } from './errors.js';

let savedPath: string | undefined;

// Plugins run with no PATH; so do these tests.
beforeEach(() => {
  savedPath = process.env.PATH;
  delete process.env.PATH;
});

afterEach(() => {
  if (savedPath !== undefined) process.env.PATH = savedPath;
});

describe('findTool', () => {
  it('finds a system tool with no PATH', () => {
    const sh = findTool('sh');
    expect(SYSTEM_DIRS.some((dir) => sh === `${dir}/sh`)).toBe(true);
  });

  it('names the package to install when the tool is missing', () => {
    let err: unknown;
    try {
      findTool('dhv-no-such-tool', 'dhv-tools');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PluginFailure);
    expect(err).toMatchObject({ code: 'ETOOLMISSING', details: { tool: 'dhv-no-such-tool' } });
    expect((err as Error).message).toMatch(/apt-get install dhv-tools/);
  });
});

describe('runTool', () => {
  it('runs a tool with the system directories as its PATH, and returns its output', async () => {
    const { stdout } = await runTool('sh', ['-c', 'echo "$PATH"; command -v ls']);
    const [path, ls] = stdout.trim().split('\n');
    expect(path).toBe(SYSTEM_DIRS.join(':'));
    expect(ls).toMatch(/\/ls$/);
  });

  it('does not go through a shell', async () => {
    expect((await runTool('echo', ['$HOME', '; rm -rf /'])).stdout).toBe('$HOME ; rm -rf /\n');
  });

  it('throws with the command, exit status and stderr when the tool fails', async () => {
    const err = await runTool('sh', ['-c', 'echo broken >&2; exit 3']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PluginFailure);
    expect(err).toMatchObject({ code: 'ETOOLFAILED', details: { tool: 'sh', exitCode: 3, stderr: 'broken\n' } });
    expect((err as Error).message).toBe('sh -c echo broken >&2; exit 3 failed (exit status 3): broken');
  });

  it('stops the tool when the signal aborts', async () => {
    const controller = new AbortController();
    const run = runTool('sleep', ['30'], { signal: controller.signal });
    controller.abort();
    await expect(run).rejects.toMatchObject({ code: 'ETOOLFAILED' });
  });

  it('starts no tool once the signal has fired, and fails as a tool stopped by it does', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dhv-run-tool-'));
    try {
      const stopped = new AbortController();
      const running = runTool('sleep', ['30'], { signal: stopped.signal });
      stopped.abort();
      const midway = await running.catch((e: unknown) => e);
      const err = await runTool('touch', [join(dir, 'made')], { signal: stopped.signal }).catch((e: unknown) => e);
      // A tool node started would have run by now.
      await new Promise((r) => setTimeout(r, 200));
      expect(existsSync(join(dir, 'made'))).toBe(false);
      expect((midway as Error).message).toBe('sleep 30 failed (The operation was aborted): no output');
      expect((err as Error).message).toBe(`touch ${join(dir, 'made')} failed (The operation was aborted): no output`);
      expect(err).toMatchObject({ code: 'ETOOLFAILED', details: { tool: 'touch', exitCode: undefined, stderr: '' } });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
