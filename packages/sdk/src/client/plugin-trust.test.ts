import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';
import { pluginTrustWarnings, writableByOthers } from './plugin-trust.js';

describe('plugins others can write', () => {
  let dir: string;
  let plugin: string;
  beforeEach(async () => {
    dir = await tempDir('trust');
    plugin = join(dir, 'p');
    await writeFile(plugin, '#!/bin/sh\n');
    await chmod(dir, 0o755);
    await chmod(plugin, 0o755);
  });
  afterEach(() => removeTempDir(dir));

  it('says nothing of a plugin and folder only their owner, the agent, can write, nor of a path that is not there', async () => {
    expect(await pluginTrustWarnings(plugin)).toEqual([]);
    expect(await writableByOthers([join(dir, 'gone')])).toEqual([]);
  });

  it('names who else can write, with the mode and the command that fixes it', async () => {
    await chmod(plugin, 0o777);
    const [warning] = await writableByOthers([plugin]);
    expect(warning).toMatch(/^the plugin \S+\/p \(mode 0777\) can be written by group \d+, every user, not only/);
    expect(warning).toMatch(/fix: chmod go-w \S+\/p$/);
    await chmod(dir, 0o775);
    expect((await pluginTrustWarnings(plugin))[0]).toMatch(
      /^the plugin dir \S+ \(mode 0775\) can be written by group \d+,/,
    );
  });

  it("names an owner other than the agent's user, and chowns it back", async () => {
    const someoneElse = (process.getuid?.() ?? 0) + 1;
    const [warning] = await writableByOthers([plugin], someoneElse);
    expect(warning).toContain(`can be written by its owner (uid ${process.getuid?.() ?? 0}), not only`);
    expect(warning).toMatch(new RegExp(`fix: chown ${someoneElse} \\S+/p$`));
  });
});
