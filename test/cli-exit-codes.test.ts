import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { COMMANDS } from '../packages/harness/src/commands/index.js';
import { bashPlugin, testWithAgent } from './support/dhv-agent.js';
import { REPO_ROOT } from './support/kit.js';

/** Each test has an agent of its own, so they run side by side. */
const it = testWithAgent();

/** The rows of the harness README's exit-code table: the command words each row names. */
function exitCodeRows(): string[][] {
  const readme = readFileSync(join(REPO_ROOT, 'packages/harness/README.md'), 'utf8');
  const table = readme.split('<!-- exit codes -->')[1]!.trimStart().split('\n\n')[0]!;
  return table
    .split('\n')
    .slice(2)
    .map((row) => row.split('|')[1]!.trim())
    .flatMap((cell) => {
      // `dhv volume create` / `register`: one row for both.
      const [first, ...others] = cell.split(' / ').map((part) => part.replaceAll('`', '').trim());
      const words = first!.split(' ').slice(1);
      return [words, ...others.map((other) => [...words.slice(0, -1), other])];
    });
}

describe.concurrent('exit codes', () => {
  it('are documented for every command in one table, and a usage mistake is 2 from each', async ({ agent }) => {
    const documented = exitCodeRows().map((words) => words.join(':'));
    expect([...documented].sort()).toEqual(Object.keys(COMMANDS).sort());
    for (const id of Object.keys(COMMANDS)) {
      if (id === 'help') continue; // help reads every word as a command name
      const run = await agent.dhv(...id.split(':'), '--no-such-flag', '--json');
      expect(run.exitCode, `${id}: ${run.stderr}`).toBe(2);
      // A command whose output is raw text (alloc logs, as Nomad's) has no --json: there it is one more unknown flag.
      if (COMMANDS[id as keyof typeof COMMANDS]?.enableJsonFlag === false)
        expect(run.stderr, id).toContain('Nonexistent flags: --no-such-flag, --json');
      else expect(JSON.parse(run.stderr).error.code, id).toBe('USAGE');
    }
  });

  it('agent fingerprint: 1 when a plugin is skipped, 0 with --allow-skipped, 1 when a real agent would crash', async ({
    agent,
  }) => {
    await agent.plugin('good', bashPlugin());
    expect((await agent.dhv('agent', 'fingerprint')).exitCode).toBe(0);

    await agent.plugin('crashes', '#!/bin/bash\nexit 2\n');
    const skipped = await agent.dhv('agent', 'fingerprint', '--json');
    expect(skipped.exitCode).toBe(1);
    expect(JSON.parse(skipped.stdout).Skipped.map((s: { ID: string }) => s.ID)).toEqual(['crashes']);
    const human = await agent.dhv('agent', 'fingerprint');
    expect(human.exitCode).toBe(1);
    expect(human.stderr).toMatch(/^Error: 1 plugin skipped \(crashes; /m);
    expect((await agent.dhv('agent', 'fingerprint', '--allow-skipped')).exitCode).toBe(0);
    expect((await agent.dhv('agent', 'fingerprint', '-allow-skipped', '-json')).exitCode).toBe(0);

    await agent.plugin('no-version', "#!/bin/bash\necho '{}'\n");
    const crash = await agent.dhv('agent', 'fingerprint', '--allow-skipped');
    expect(crash.exitCode).toBe(1);
    expect(crash.stderr).toMatch(/^Error: a real Nomad agent would crash on no-version/m);
  });
});
