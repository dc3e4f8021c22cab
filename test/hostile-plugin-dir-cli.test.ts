import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bashPlugin, tempAgent, volumeHcl, type TempAgent } from './support/dhv-agent.js';

/** One bad entry in the plugin dir neither hangs dhv nor breaks the agent. */

let agent: TempAgent | undefined;
afterEach(async () => {
  await agent?.cleanup();
  agent = undefined;
});

describe('a plugin dir with hostile entries, through the CLI', () => {
  it('a FIFO with an execute bit: fingerprint finishes and skips it, a create with it fails at once and leaves its name free', async () => {
    agent = await tempAgent();
    await agent.plugin('good', bashPlugin());
    execFileSync('/usr/bin/mkfifo', [join(agent.pluginDir, 'fifo')]);
    await chmod(join(agent.pluginDir, 'fifo'), 0o755);

    const started = performance.now();
    const out = await agent.json('agent', 'fingerprint', '--allow-skipped');
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(out.Attributes['plugins.host_volume.good.version']).toBe('1.0.0');
    const skipped = out.Skipped.find((s: { ID: string }) => s.ID === 'fifo');
    expect(skipped.Reason).toMatch(/permission denied\n.*is a FIFO \(named pipe\), not a program/);

    const failed = await agent.dhv(
      'volume',
      'create',
      await agent.file('f.hcl', volumeHcl({ name: 'v', plugin_id: 'fifo' })),
    );
    expect(failed.exitCode).not.toBe(0);
    const created = await agent.json(
      'volume',
      'create',
      await agent.file('g.hcl', volumeHcl({ name: 'v', plugin_id: 'good' })),
    );
    expect(created.Created).toBe(true);
  });

  it('a script whose #! line names itself: fingerprint, restart and status keep working for the others', async () => {
    agent = await tempAgent();
    await agent.plugin('good', bashPlugin());
    const sb = join(agent.pluginDir, 'sb');
    await writeFile(sb, `#!${sb}\n`);
    await chmod(sb, 0o755);

    const out = await agent.json('agent', 'fingerprint', '--allow-skipped');
    expect(out.Attributes['plugins.host_volume.good.version']).toBe('1.0.0');
    expect(out.Skipped.find((s: { ID: string }) => s.ID === 'sb').Reason).toMatch(/too many levels of symbolic links/);
    expect(
      (await agent.json('volume', 'create', await agent.file('g.hcl', volumeHcl({ name: 'kept', plugin_id: 'good' }))))
        .Created,
    ).toBe(true);
    expect((await agent.dhv('agent', 'restart')).exitCode).toBe(0);
    const status = await agent.dhv('volume', 'status');
    expect(status.exitCode).toBe(0);
    expect(status.stdout).toMatch(/kept/);
    expect((await agent.dhv('node', 'status')).exitCode).toBe(0);
  });
});
