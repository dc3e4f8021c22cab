import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { tempAgent, type TempAgent } from './support/dhv-agent.js';
import { killAll } from './support/processes.js';

/**
 * What dhv noticed about a plugin run reaches the user: the plugin's stderr and the agent's
 * log lines at fingerprint, and a helper killed for holding the output of `dhv plugin run`.
 */

let agent: TempAgent | undefined;
const leftovers = new Set<number>();
afterEach(async () => {
  const pids = [...leftovers];
  leftovers.clear();
  killAll(pids);
  await agent?.cleanup();
  agent = undefined;
});

/** Running, or able to run: not gone and not a zombie waiting for whoever adopted it to reap it. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Exits at once, leaving a helper in a session of its own that holds stdout and stderr. */
const LEAVES_HELPER = '#!/bin/bash\n/usr/bin/setsid /bin/sleep 30 &\necho \'{"version": "1"}\'\n';

describe('dhv agent fingerprint', () => {
  it("shows what each plugin wrote to stderr, the agent's log line for each one skipped, and a crash a real agent has", async () => {
    agent = await tempAgent();
    await agent.plugin('chatty', '#!/bin/bash\necho "chatty: warming up" >&2\necho \'{"version": "1.2"}\'\n');
    await agent.plugin('crashes', '#!/bin/bash\necho "crashes: boom" >&2\nexit 2\n');
    await agent.plugin('no-version', "#!/bin/bash\necho '{}'\n");

    // A real agent would crash: the fingerprint fails a CI gate, --allow-skipped or not.
    const json = await agent.dhv('agent', 'fingerprint', '--json', '--allow-skipped');
    expect(json.exitCode).toBe(1);
    // The verdict is one error document on stderr; the report stays whole on stdout.
    expect(JSON.parse(json.stderr)).toMatchObject({ kind: 'Error', error: { code: 'NOMAD_WOULD_CRASH' } });
    const out = JSON.parse(json.stdout);
    const chatty = out.Plugins.find((p: { ID: string }) => p.ID === 'chatty');
    expect(chatty).toMatchObject({ Version: '1.2.0', Stderr: 'chatty: warming up\n', Warnings: [] });
    const crashes = out.Skipped.find((s: { ID: string }) => s.ID === 'crashes');
    expect(crashes).toMatchObject({
      Stderr: 'crashes: boom\n',
      Logged: { Level: 'error', Message: 'error running plugin', Error: 'exit status 2' },
    });
    expect(out.NomadCrash).toEqual({
      PluginID: 'no-version',
      Panic: 'runtime error: invalid memory address or nil pointer dereference',
    });
    expect(out.Logs).toEqual([]);

    const human = await agent.dhv('agent', 'fingerprint');
    expect(human.exitCode).toBe(1);
    expect(human.stderr).toMatch(/^Error: a real Nomad agent would crash on no-version \(Nomad Crash above\)/m);
    expect(human.stdout).toMatch(/Plugin stderr\n {2}chatty:\n {4}chatty: warming up\n {2}crashes:\n {4}crashes: boom/);
    expect(human.stdout).toMatch(
      /Agent Log\n.*\[ERROR\] error running plugin: plugin_id=crashes error="exit status 2"/,
    );
    expect(human.stdout).toMatch(/Nomad Crash\n {2}a real Nomad agent panics fingerprinting no-version/);
  });

  it("carries a plugin's warnings through, and logs a plugin dir that does not exist", async () => {
    agent = await tempAgent();
    await agent.plugin('leaves-helper', LEAVES_HELPER);
    const out = await agent.json('agent', 'fingerprint');
    const plugin = out.Plugins.find((p: { ID: string }) => p.ID === 'leaves-helper');
    expect(plugin.Version).toBe('1.0.0');
    expect(plugin.Warnings.join('\n')).toMatch(/still held its stdout or stderr at the 1s deadline: dhv killed it/);

    const missing = await agent.json('agent', 'fingerprint', '--plugin-dir', `${agent.dir}/nowhere`);
    expect(missing.Logs).toEqual([
      { Level: 'debug', Message: 'plugin dir does not exist', Dir: `${agent.dir}/nowhere` },
    ]);
  });
});

describe('dhv plugin run', () => {
  it('warns, naming the process, when a helper the plugin left held its output and was killed at the deadline', async () => {
    agent = await tempAgent();
    const plugin = await agent.plugin('leaves-helper', LEAVES_HELPER);

    const json = await agent.json('plugin', 'run', plugin, 'fingerprint');
    for (const h of json.outputHolders) leftovers.add(h.pid);
    expect(json.result).toEqual({ version: '1.0.0', rawVersion: '1' });
    expect(json.outputHeldOpen).toBe(true);
    expect(json.outputHolders).toEqual([
      { pid: expect.any(Number), command: '/usr/bin/sleep', holds: 'stdout' },
      { pid: json.outputHolders[0].pid, command: '/usr/bin/sleep', holds: 'stderr' },
    ]);
    expect(json.warnings).toHaveLength(1);
    expect(json.warnings[0]).toContain(`killed process ${json.outputHolders[0].pid} (/usr/bin/sleep)`);
    expect(alive(json.outputHolders[0].pid)).toBe(false);

    const human = await agent.dhv('plugin', 'run', plugin, 'fingerprint');
    const pid = Number(/killed process ([0-9]+)/.exec(human.stderr)?.[1]);
    if (pid > 1) leftovers.add(pid);
    expect(human.exitCode).toBe(0);
    expect(human.stderr).toMatch(
      /^warning: the plugin exited, but a process it started still held its stdout or stderr at the 1s deadline: dhv killed it; .*; killed process [0-9]+ \(\/usr\/bin\/sleep\), which held stdout and stderr$/m,
    );
    expect(human.stdout).toMatch(/succeeded in/);
    expect(alive(pid)).toBe(false);
  });

  it('says nothing of the kind for a plugin that leaves nothing behind', async () => {
    agent = await tempAgent();
    const plugin = await agent.plugin('tidy', '#!/bin/bash\necho \'{"version": "1"}\'\n');
    const json = await agent.json('plugin', 'run', plugin, 'fingerprint');
    expect(json).toMatchObject({ outputHeldOpen: false, outputHolders: [], warnings: [] });
    const human = await agent.dhv('plugin', 'run', plugin, 'fingerprint');
    expect(human.stderr).not.toMatch(/warning:/);
  });
});
