import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { COMMANDS } from '../packages/harness/src/commands/index.js';
import { bashPlugin, testWithAgent, volumeHcl } from './support/dhv-agent.js';
import { REFERENCE_LOOPBACK, REFERENCE_MKDIR, REPO_ROOT, runDhv } from './support/kit.js';

/** Each test has an agent of its own, so they run side by side. */
const it = testWithAgent();

describe.concurrent('a failure says its cause and its fix, and --json keeps what explains it', () => {
  it('a misspelt plugin_id: the warning is in the JSON error too, and the hint names the missing plugin_id', async ({
    agent,
  }) => {
    const spec = await agent.file('a.hcl', 'name = "a"\ntype = "host"\nplugin = "mkdir"\n');
    const warning = 'unknown key "plugin" is ignored, as Nomad ignores it (did you mean plugin_id?)';
    const json = await agent.dhv('volume', 'create', spec, '--json');
    expect(json.exitCode).toBe(1);
    const { error } = JSON.parse(json.stderr);
    expect(error.code).toBe('PLACEMENT_FAILED');
    expect(error.warnings).toEqual([warning]);
    expect(error.message).toContain(
      'Nomad asks for the plugin "default" when the spec sets no plugin_id: set plugin_id',
    );
    expect(error.message).not.toMatch(/Put it in/);

    const human = await agent.dhv('volume', 'create', spec);
    expect(human.stderr.match(/did you mean plugin_id\?/g)).toHaveLength(1);
    expect(human.stderr).toContain(`warning: ${warning}\n`);
  });

  it('a spec without type: the hint says to add type = "host"', async ({ agent }) => {
    const run = await agent.dhv('volume', 'create', await agent.file('b.hcl', 'name = "b"\nplugin_id = "mkdir"\n'));
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toBe(
      `Error: Error unknown volume type: \nThe spec has no type: add type = "host" to ${join(agent.dir, 'b.hcl')} (nomad volume create stops here too).\n`,
    );
  });

  it("capacity_min without capacity_max: Nomad's error, then that the missing capacity_max reads as 0", async ({
    agent,
  }) => {
    const spec = await agent.file('c.hcl', volumeHcl({ name: 'c', plugin_id: 'mkdir', capacity_min: '1MiB' }));
    const run = await agent.dhv('volume', 'create', spec);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(
      /^Error: volume validation failed: capacity_max \(0\) must be larger than capacity_min \(1048576\)\ncapacity_min is set without capacity_max, which Nomad then reads as 0: add capacity_max/,
    );
    // Both set, the wrong way round: Nomad's error alone, not a hint about a missing capacity_max.
    const both = await agent.dhv(
      'volume',
      'create',
      await agent.file(
        'd.hcl',
        volumeHcl({ name: 'd', plugin_id: 'mkdir', capacity_min: '2MiB', capacity_max: '1MiB' }),
      ),
    );
    expect(both.exitCode).toBe(1);
    expect(both.stderr).not.toContain('without capacity_max');
  });

  it('a plugin already in the named plugin dir whose fingerprint failed: its failure, not "Put it in" that dir', async ({
    agent,
  }) => {
    await agent.plugin('broken', '#!/bin/bash\nexit 3\n');
    const run = await agent.dhv(
      'volume',
      'create',
      await agent.file('e.hcl', volumeHcl({ name: 'e', plugin_id: 'broken' })),
    );
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(
      `It is in ${agent.pluginDir}, but its fingerprint failed: error fingerprinting plugin "broken": exit status 3. Fix the plugin`,
    );
    expect(run.stderr).not.toContain('Put it in');
    // One that is not there is told where to put it.
    const absent = await agent.dhv(
      'volume',
      'create',
      await agent.file('f.hcl', volumeHcl({ name: 'f', plugin_id: 'nowhere' })),
    );
    expect(absent.stderr).toContain(`Put it in ${agent.pluginDir} and run dhv agent fingerprint`);
  });

  it('a plugin put in the plugin dir after the last fingerprint: a fingerprint to run, not "Put it in" where it is', async ({
    agent,
  }) => {
    expect((await agent.dhv('agent', 'fingerprint')).exitCode).toBe(0);
    await agent.plugin('late', bashPlugin());
    const run = await agent.dhv(
      'volume',
      'create',
      await agent.file('g.hcl', volumeHcl({ name: 'g', plugin_id: 'late' })),
      '--json',
    );
    expect(run.exitCode).toBe(1);
    const { error } = JSON.parse(run.stderr);
    expect(error.code).toBe('PLACEMENT_FAILED');
    expect(error.message).toContain(
      `It is in ${agent.pluginDir}, but the node's last fingerprint did not see it (it came later, or the fingerprint read another plugin dir): run dhv agent fingerprint`,
    );
    expect(error.message).not.toContain('Put it in');
    // As the hint says: after a fingerprint the create goes through.
    expect((await agent.dhv('agent', 'fingerprint')).exitCode).toBe(0);
    expect((await agent.dhv('volume', 'create', join(agent.dir, 'g.hcl'))).exitCode).toBe(0);
  });
});

describe.concurrent('one message per failure', () => {
  it("a plugin's failure is said once, not again as its stdout", async ({ agent }) => {
    await agent.plugin(
      'fails',
      '#!/bin/sh\ncase "$1" in fingerprint) echo \'{"version":"1.0.0"}\';; *) echo \'{"error":"disk on fire"}\'; exit 1;; esac\n',
    );
    const run = await agent.dhv(
      'volume',
      'create',
      await agent.file('x.hcl', volumeHcl({ name: 'x', plugin_id: 'fails' })),
    );
    expect(run.exitCode).toBe(1);
    expect(run.stderr.match(/disk on fire/g)).toHaveLength(1);
    expect(run.stderr).toMatch(
      /^Error: HostVolume.Create error: error creating volume "[0-9a-f-]+" with plugin "fails": exit status 1: disk on fire\n/,
    );
    // plugin run says it once too, and its closing hint reaches --json among the hints.
    const human = await agent.dhv('plugin', 'run', 'fails', 'create', '--name', 'x');
    expect(human.exitCode).toBe(1);
    expect(human.stderr.match(/disk on fire/g)).toHaveLength(1);
    const hint = "The plugin's message says why; `dhv check <plugin>` runs the conformance suite against it.";
    expect(human.stderr).toContain(`\n  ${hint}\n`);
    const json = await agent.dhv('plugin', 'run', 'fails', 'create', '--name', 'x', '--json');
    expect(JSON.parse(json.stderr)).toMatchObject({ kind: 'Error', error: { code: 'PLUGIN_FAILED', hints: [hint] } });
  });

  it('the checks one failed check kept from running are one SKIP line naming it and the count', async ({ agent }) => {
    const plugin = await agent.plugin('bad', '#!/bin/sh\necho "boom" >&2\nexit 1\n');
    const run = await runDhv(['check', plugin, '--volumes-dir', agent.volumesDir, '--skip', 'errors']);
    expect(run.exitCode).toBe(1);
    const skips = run.stdout.match(/^SKIP.*$/gm) ?? [];
    expect(skips).toHaveLength(1);
    expect(skips[0]).toMatch(
      /^SKIP {2}\d+ checks not run because discovery\.fingerprint-succeeds failed \(\d+ required: not judged; --json and --junit list each\)$/,
    );
    expect(run.stdout.match(/boom/g)).toHaveLength(1);
  });
});

describe.concurrent('dhv plugin run, as an agent runs a plugin', () => {
  it("leaves a missing volumes dir missing, as Nomad's client does, and says so when create fails on it", async ({
    agent,
  }) => {
    const plugin = await agent.plugin(
      'strict',
      '#!/bin/sh\ncase "$1" in fingerprint) echo \'{"version":"1.0.0"}\';; create) /bin/mkdir "$DHV_VOLUMES_DIR/$DHV_VOLUME_ID" || exit 1; echo "{\\"path\\":\\"$DHV_VOLUMES_DIR/$DHV_VOLUME_ID\\",\\"bytes\\":0}";; esac\n',
    );
    const run = await agent.dhv('plugin', 'run', plugin, 'create', '--name', 'a');
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(
      `warning: the volumes dir ${agent.volumesDir} does not exist: Nomad's client never makes it`,
    );
    expect(existsSync(agent.volumesDir)).toBe(false);
    // The built-in mkdir makes it, as a parent of its volume, as Nomad's does.
    expect((await agent.dhv('plugin', 'run', 'mkdir', 'create', '--name', 'b')).exitCode).toBe(0);
    expect(existsSync(agent.volumesDir)).toBe(true);
  });
});

describe.concurrent('create.expands', () => {
  /** Reports its "filesystem's" free space, which drops 1 MiB a call as other processes write, capped at capacity_max. */
  const FREE_SPACE_PLUGIN = `#!/bin/bash
dir="$DHV_VOLUMES_DIR/$DHV_VOLUME_ID"
counter="$DHV_VOLUMES_DIR/.calls"
case "$1" in
  fingerprint) echo '{"version": "1.0.0"}' ;;
  create)
    /bin/mkdir -p "$dir" || exit 1
    calls=$(( $(/bin/cat "$counter" 2>/dev/null || echo 0) + 1 )); echo $calls > "$counter"
    free=$(( 100 * 1024 * 1024 * 1024 - calls * 1024 * 1024 ))
    max=\${DHV_CAPACITY_MAX_BYTES:-0}
    if [ "$max" -gt 0 ] && [ "$free" -gt "$max" ]; then free=$max; fi
    echo "{\\"path\\": \\"$dir\\", \\"bytes\\": $free}" ;;
  delete) /bin/rm -rf "$dir"; echo '{}' ;;
esac
`;

  it('judges a plugin reporting free space on the cap it applies, not on free space that moved; dhv-mkdir passes', async ({
    agent,
  }) => {
    const plugin = await agent.plugin('free-space', FREE_SPACE_PLUGIN);
    for (const target of [plugin, REFERENCE_MKDIR]) {
      const run = await runDhv([
        'check',
        target,
        '--only',
        'create.expands',
        '--volumes-dir',
        agent.volumesDir,
        '--json',
      ]);
      const result = JSON.parse(run.stdout).results.find((r: { id: string }) => r.id === 'create.expands');
      expect(result, `${target}: ${run.stderr}`).toMatchObject({ status: 'pass', notes: ['16 MiB → 32 MiB'] });
    }
    // A plugin that does not grow its volume still fails it.
    const stuck = await agent.plugin(
      'stuck',
      FREE_SPACE_PLUGIN.replace('free=$max; fi', 'free=$max; fi; free=16777216'),
    );
    const run = await runDhv(['check', stuck, '--only', 'create.expands', '--volumes-dir', agent.volumesDir, '--json']);
    expect(JSON.parse(run.stdout).results.find((r: { id: string }) => r.id === 'create.expands').status).toBe('fail');
  });
});

describe.concurrent('the registry route', () => {
  it('dhv init --from-registry warns that @dhv/* are not published yet, in text and in JSON', async ({ agent }) => {
    const human = await runDhv(['init', 'from-registry', '--from-registry'], { cwd: agent.dir });
    expect(human.exitCode, human.stderr).toBe(0);
    expect(human.stderr).toMatch(
      /^warning: --from-registry: @dhv\/sdk and @dhv\/harness are not on the npm registry yet/m,
    );
    const json = await runDhv(['init', 'from-registry-json', '--from-registry', '--json'], { cwd: agent.dir });
    expect(JSON.parse(json.stdout)).toMatchObject({
      kind: 'InitResult',
      warnings: [expect.stringContaining('not on the npm registry yet')],
    });
  });
});

describe.concurrent("dhv's own JSON documents say their kind and version", () => {
  it('the check report, the plugin run and the version carry apiVersion dhv/v1 and their kind', async ({ agent }) => {
    const check = await runDhv(['check', REFERENCE_MKDIR, '--only', 'discovery.fingerprint-succeeds', '--json']);
    expect(check.exitCode, check.stderr).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({ apiVersion: 'dhv/v1', kind: 'CheckReport', dhvVersion: '0.1.0' });
    const run = await agent.json('plugin', 'run', 'mkdir', 'fingerprint');
    expect(run).toMatchObject({ apiVersion: 'dhv/v1', kind: 'PluginRun' });
    // Nomad's own shapes stay Nomad's: the node as api.Node, nothing added.
    const node = await agent.json('node', 'status', '-self');
    expect(node).not.toHaveProperty('kind');
    expect(node).not.toHaveProperty('apiVersion');
  });

  it("the Nomad-shaped topics' own reports are headed too, their fields as they were; Nomad's objects are not", async ({
    agent,
  }) => {
    const head = (kind: string) => ({ apiVersion: 'dhv/v1', kind });
    const spec = await agent.file('a.hcl', volumeHcl({ name: 'a', plugin_id: 'mkdir' }));
    const created = await agent.json('volume', 'create', spec);
    expect(Object.keys(created)).toEqual(['apiVersion', 'kind', 'Volume', 'Created', 'Warnings', 'DataDir']);
    expect(created).toMatchObject({ ...head('VolumeCreateResult'), Created: true, Volume: { Name: 'a' } });
    expect(created.Volume).not.toHaveProperty('kind');
    const registered = await agent.json(
      'volume',
      'register',
      await agent.file('r.hcl', volumeHcl({ name: 'r', host_path: agent.dir })),
    );
    expect(registered).toMatchObject({ ...head('VolumeRegisterResult'), Created: true });
    const id: string = created.Volume.ID;
    for (const doc of [
      await agent.json('volume', 'status', id),
      await agent.json('volume', 'status'),
      await agent.json('volume', 'claim', 'list'),
    ]) {
      expect(doc).not.toHaveProperty('kind');
      expect(doc).not.toHaveProperty('apiVersion');
    }
    expect(await agent.json('agent', 'fingerprint')).toMatchObject({
      ...head('FingerprintReport'),
      Plugins: expect.any(Array),
    });
    const restarted = await agent.json('agent', 'restart');
    expect(restarted).toMatchObject({ ...head('RestartReport'), NodeID: expect.any(String) });
    expect(restarted.Fingerprint).not.toHaveProperty('kind');
    expect(await agent.json('agent', 'gc')).toMatchObject({ ...head('GcReport'), Orphans: [] });
    expect(await agent.json('volume', 'delete', id)).toMatchObject({ ...head('VolumeDeleteResult'), Deleted: id });
  });
});

describe('one JSON rule, written in the README', () => {
  /** The commands whose document is Nomad's own object (api.HostVolume, api.Node, api.Job...): nothing added. */
  const NOMAD_OBJECTS = [
    'volume:status',
    'volume:claim:list',
    'node:status',
    'job:status',
    'alloc:status',
    'namespace:list',
    'namespace:status',
    'namespace:apply',
  ];
  const source = (id: string) =>
    readFileSync(join(REPO_ROOT, 'packages/harness/src/commands', `${id.replaceAll(':', '/')}.ts`), 'utf8');

  test("heads every dhv-own document with a kind, the Nomad-shaped topics' included, never Nomad's own objects, and names each kind", () => {
    const commands = Object.entries(COMMANDS).filter(([, command]) => command.enableJsonFlag !== false);
    for (const [id] of commands) expect(source(id).includes('dhvDocument('), id).toBe(!NOMAD_OBJECTS.includes(id));
    const kinds = readdirSync(join(REPO_ROOT, 'packages/harness/src'), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
      .flatMap((file) => [
        ...readFileSync(join(REPO_ROOT, 'packages/harness/src', file), 'utf8').matchAll(/dhvDocument\(\s*'(\w+)'/g),
      ])
      .map((m) => m[1]!);
    expect(kinds).toContain('Error');
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const rule = readme.slice(readme.indexOf('### JSON output'), readme.indexOf('Agent commands share'));
    for (const kind of new Set(kinds)) expect(rule, kind).toMatch(new RegExp(`[\`"]${kind}[\`"]`));
  });
});

describe.concurrent('the reference plugins', () => {
  it('plugin list names each with its path; plugin install copies one and never replaces a different file', async ({
    agent,
  }) => {
    const listed = await runDhv(['plugin', 'list', '--json']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    const list = JSON.parse(listed.stdout);
    expect(list).toMatchObject({ apiVersion: 'dhv/v1', kind: 'ReferencePluginList' });
    expect(list.plugins.map((p: { id: string; path: string }) => [p.id, p.path])).toEqual([
      ['dhv-mkdir', REFERENCE_MKDIR],
      ['dhv-loopback', REFERENCE_LOOPBACK],
    ]);

    const installed = await agent.dhv('plugin', 'install', 'dhv-mkdir');
    expect(installed.exitCode, installed.stderr).toBe(0);
    expect(installed.stdout).toContain(`Installed dhv-mkdir as ${join(agent.pluginDir, 'dhv-mkdir')}`);
    expect(await readFile(join(agent.pluginDir, 'dhv-mkdir'))).toEqual(await readFile(REFERENCE_MKDIR));
    const again = await agent.dhv('plugin', 'install', 'dhv-mkdir', agent.pluginDir);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain('already');
    const fingerprint = await agent.json('agent', 'fingerprint');
    expect(fingerprint.Attributes['plugins.host_volume.dhv-mkdir.version']).toBe('0.1.0');

    const mine = join(agent.pluginDir, 'dhv-loopback');
    await writeFile(mine, '#!/bin/sh\necho mine\n', { mode: 0o755 });
    const refused = await agent.dhv('plugin', 'install', 'dhv-loopback', '--json');
    expect(refused.exitCode).toBe(1);
    expect(JSON.parse(refused.stderr).error).toMatchObject({ code: 'PLUGIN_FILE_DIFFERS', path: mine });
    expect(await readFile(mine, 'utf8')).toBe('#!/bin/sh\necho mine\n');
  });
});
