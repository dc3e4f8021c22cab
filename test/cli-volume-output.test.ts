import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { DHV_BIN, skipUnless, tool, type DhvRun } from './support/kit.js';
import { testWithAgent, volumeHcl, type TempAgent } from './support/dhv-agent.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const TIME = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(?:Z|[+-]\\d\\d:\\d\\d)';

/** Each test has an agent of its own, so they run side by side. */
const it = testWithAgent();

/** Runs dhv with stdout on a terminal (util-linux `script` gives it a pty), as a user at a shell sees it. */
function onTerminal(agent: TempAgent, ...args: string[]): Promise<Pick<DhvRun, 'exitCode' | 'stdout' | 'stderr'>> {
  const command = [process.execPath, DHV_BIN, ...args, '--data-dir', agent.dataDir]
    .map((a) => `'${a.replaceAll("'", "'\\''")}'`)
    .join(' ');
  return new Promise((done) => {
    execFile(
      '/usr/bin/script',
      ['-qec', command, '/dev/null'],
      { cwd: agent.dir, env: { ...process.env, TERM: 'dumb' } },
      (err, stdout, stderr) => {
        done({
          exitCode: err ? Number((err as { code?: unknown }).code ?? 1) : 0,
          stdout: stdout.replaceAll('\r\n', '\n'),
          stderr,
        });
      },
    );
  });
}

async function create(agent: TempAgent, name: string, ...flags: string[]): Promise<DhvRun> {
  return agent.dhv(
    'volume',
    'create',
    ...flags,
    await agent.file(`${name}.hcl`, volumeHcl({ name, plugin_id: 'mkdir' })),
  );
}

describe.concurrent('dhv volume create prints what nomad volume create prints', () => {
  it("without a terminal: the banner, then the monitor's two ==> lines, IDs and names cut to 8", async ({ agent }) => {
    const run = await create(agent, 'scratch-volume');
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toBe('');
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    const id = new RegExp(`^==> Created host volume scratch-volume with ID (${UUID})$`).exec(lines[0]!)?.[1];
    expect(id).toBeDefined();
    expect(lines[1]).toMatch(new RegExp(`^==> ${TIME}: Monitoring volume "${id!.slice(0, 8)}"\\.\\.\\.$`));
    expect(lines[2]).toMatch(new RegExp(`^==> ${TIME}: Volume "scratch-" ready$`));
  });

  it('-verbose shows full IDs and names in the monitor', async ({ agent }) => {
    const run = await create(agent, 'scratch-volume', '-verbose');
    const id = new RegExp(`ID (${UUID})`).exec(run.stdout)![1]!;
    expect(run.stdout).toContain(`: Monitoring volume "${id}"...`);
    expect(run.stdout).toMatch(/: Volume "scratch-volume" ready\n$/);
  });

  it('-detach and --detach print the one line and no monitor', async ({ agent }) => {
    for (const flag of ['-detach', '--detach']) {
      const run = await create(agent, `d${flag.length}`, flag);
      expect(run.exitCode).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^Created host volume d${flag.length} with ID ${UUID}\n$`));
    }
  });

  it.skipIf(skipUnless('volume output on a terminal', tool('script', 'bsdutils')))(
    "on a terminal: the live view's last frame, a timestamp and the short detail block",
    async ({ agent }) => {
      const spec = await agent.file('tty.hcl', volumeHcl({ name: 'tty', plugin_id: 'mkdir' }));
      const run = await onTerminal(agent, 'volume', 'create', spec);
      expect(run.exitCode).toBe(0);
      const id = new RegExp(`==> Created host volume tty with ID (${UUID})`).exec(run.stdout)![1]!;
      expect(run.stdout).toContain(`  ✓ Host volume "${id.slice(0, 8)}" ready\n\n`);
      expect(run.stdout).toMatch(new RegExp(`\n {4}${TIME}\n {4}ID {8}= ${id}\n`));
      for (const line of [
        'Name      = tty',
        'Plugin ID = mkdir',
        'State     = ready',
        `Host Path = ${agent.volumesDir}/${id}`,
      ])
        expect(run.stdout).toContain(`    ${line}\n`);
      expect(run.stdout).not.toContain('Capabilities');
      expect(run.stdout).not.toContain('Allocations');
    },
  );
});

describe.concurrent('dhv volume register, delete and status print what nomad prints', () => {
  it('register prints one line', async ({ agent }) => {
    const path = join(agent.dir, 'existing');
    await mkdir(path);
    const run = await agent.dhv(
      'volume',
      'register',
      await agent.file('r.hcl', volumeHcl({ name: 'legacy', host_path: path })),
    );
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^Registered host volume legacy with ID ${UUID}\n$`));
  });

  it('delete prints Successfully deleted volume "<id>"!, with -type host and -force accepted', async ({ agent }) => {
    const id = new RegExp(`ID (${UUID})`).exec((await create(agent, 'gone', '-detach')).stdout)![1]!;
    const run = await agent.dhv('volume', 'delete', '-type', 'host', '-force', id.slice(0, 8));
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe(`Successfully deleted volume "${id}"!\n`);
  });

  it('status lists volumes sorted by ID, cut to 8 unless -verbose, and with none prints the header and says so on stderr', async ({
    agent,
  }) => {
    const { exitCode, stdout, stderr } = await agent.dhv('volume', 'status');
    expect({ exitCode, stdout, stderr }).toEqual({
      exitCode: 0,
      stdout: 'Dynamic Host Volumes\n',
      stderr: 'No dynamic host volumes\n',
    });
    const ids = [];
    for (const name of ['one', 'two'])
      ids.push(new RegExp(`ID (${UUID})`).exec((await create(agent, name, '-detach')).stdout)![1]!);
    ids.sort();
    const list = await agent.dhv('volume', 'status', '-type', 'host');
    const rows = list.stdout.trimEnd().split('\n');
    expect(rows[0]).toBe('Dynamic Host Volumes');
    expect(rows[1]).toMatch(/^ID\s+Name\s+Namespace\s+Plugin ID\s+Node ID\s+Node Pool\s+State$/);
    expect(rows.slice(2).map((r) => r.split(/\s+/)[0])).toEqual(ids.map((id) => id.slice(0, 8)));
    const verbose = await agent.dhv('volume', 'status', '-verbose');
    expect(
      verbose.stdout
        .trimEnd()
        .split('\n')
        .slice(2)
        .map((r) => r.split(/\s+/)[0]),
    ).toEqual(ids);
  });

  it('status <id> prints the detail block; -short only its key = value lines', async ({ agent }) => {
    const id = new RegExp(`ID (${UUID})`).exec((await create(agent, 'detail', '-detach')).stdout)![1]!;
    const full = await agent.dhv('volume', 'status', id.slice(0, 6));
    expect(full.stdout).toContain(`ID        = ${id}\nName      = detail\n`);
    expect(full.stdout).toMatch(
      /\n\nCapabilities\nAccess Mode\s+Attachment Mode\nsingle-node-writer\s+file-system\n\nAllocations\nNo allocations placed\n$/,
    );
    const brief = await agent.dhv('volume', 'status', '-short', id.slice(0, 6));
    expect(
      brief.stdout
        .trimEnd()
        .split('\n')
        .map((l) => l.split(' ')[0]),
    ).toEqual(['ID', 'Name', 'Namespace', 'Plugin', 'Node', 'Node', 'Capacity', 'State', 'Host']);
  });

  it('-json and --json print the volume(s) as JSON', async ({ agent }) => {
    const id = new RegExp(`ID (${UUID})`).exec((await create(agent, 'js', '-detach')).stdout)![1]!;
    for (const flag of ['-json', '--json']) {
      const one = await agent.dhv('volume', 'status', flag, id);
      expect(JSON.parse(one.stdout)).toMatchObject({ ID: id, Name: 'js', State: 'ready' });
      const all = await agent.dhv('volume', 'status', flag);
      expect(JSON.parse(all.stdout)).toEqual([expect.objectContaining({ ID: id })]);
    }
  });

  it('-t renders a Go template over the list or one volume, and refuses what it does not understand', async ({
    agent,
  }) => {
    const id = new RegExp(`ID (${UUID})`).exec((await create(agent, 'tpl', '-detach')).stdout)![1]!;
    const list = await agent.dhv(
      'volume',
      'status',
      '-t',
      '{{range .}}{{.ID}} {{.Name}} {{.CapacityBytes}}{{"\\n"}}{{end}}',
    );
    expect(list.stdout).toBe(`${id} tpl 0\n`);
    const one = await agent.dhv('volume', 'status', id, '-t', '{{.Name}}:{{if .Parameters}}params{{else}}none{{end}}');
    expect(one.stdout).toBe('tpl:none\n');
    const indexed = await agent.dhv('volume', 'status', '-t', '{{printf "%s=%d" (index . 0).Name (len .)}}');
    expect(indexed.stdout).toBe('tpl=1\n');
    const refused = await agent.dhv('volume', 'status', '-t', '{{sprig_upper (index . 0).Name}}');
    expect(refused.exitCode).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/is not supported: sprig_upper is not; dhv understands/);
  });

  it('-node and -node-pool filter the list, and are refused with an ID as Nomad refuses them', async ({ agent }) => {
    const created = JSON.parse((await create(agent, 'f', '--json')).stdout);
    const nodeId: string = created.Volume.NodeID;
    expect((await agent.dhv('volume', 'status', '-node', nodeId.slice(0, 4))).stdout).toContain('f ');
    expect((await agent.dhv('volume', 'status', '-node', 'ffffffff-no')).stderr).toBe('No dynamic host volumes\n');
    expect((await agent.dhv('volume', 'status', '-node-pool', 'default')).stdout).toContain(
      created.Volume.ID.slice(0, 8),
    );
    expect((await agent.dhv('volume', 'status', '-node-pool=gpu')).stdout).toBe('Dynamic Host Volumes\n');
    const both = await agent.dhv('volume', 'status', '-node', nodeId, created.Volume.ID);
    expect(both.exitCode).toBe(1);
    expect(both.stderr).toContain('-node or -node-pool options can only be used when no ID is provided');
  });

  it('-type other than host is refused, naming the type', async ({ agent }) => {
    const run = await agent.dhv('volume', 'status', '-type', 'csi');
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('No such volume type "csi"');
  });
});

describe.concurrent('what a user typed cannot forge output', () => {
  it('a name with a newline, CR or escape codes is printed escaped: it cannot forge a row of the status table', async ({
    agent,
  }) => {
    const spec = await agent.file(
      'evil.json',
      JSON.stringify({ type: 'host', name: 'evil\nb6e1f2a3  fake  default  mkdir\r\x1b[2K', plugin_id: 'mkdir' }),
    );
    const created = await agent.dhv('volume', 'create', spec);
    expect(created.exitCode).toBe(0);
    expect(created.stdout).toContain(
      '==> Created host volume evil\\nb6e1f2a3  fake  default  mkdir\\r\\x1b[2K with ID',
    );
    // The servers' warnings, printed as Nomad prints them: on stdout, before the result.
    expect(created.stdout).toMatch(
      /^Volume Warnings:\nthe volume name "evil\\nb6e1f2a3 .* holds control characters: Nomad's servers accept it/,
    );
    expect(created.stdout).not.toMatch(/[\r\x1b]/);
    expect(created.stderr).not.toMatch(/[\r\x1b]/);
    const list = await agent.dhv('volume', 'status');
    const rows = list.stdout.trimEnd().split('\n');
    expect(rows).toHaveLength(3);
    expect(rows[2]).toContain('evil\\nb6e1f2a3  fake  default  mkdir\\r\\x1b[2K');
    expect(list.stdout).not.toMatch(/[\r\x1b]/);
    // JSON keeps the name exactly: a program reading it sees what was asked for.
    expect((await agent.json('volume', 'status'))[0].Name).toBe('evil\nb6e1f2a3  fake  default  mkdir\r\x1b[2K');
  });

  it('a name with U+202E or other bidi and format characters is printed escaped: it cannot show a row reversed', async ({
    agent,
  }) => {
    const name = 'safe\u202egpj.exe\u2066x\u200by';
    const spec = await agent.file('bidi.json', JSON.stringify({ type: 'host', name, plugin_id: 'mkdir' }));
    const created = await agent.dhv('volume', 'create', spec);
    expect(created.exitCode, created.stderr).toBe(0);
    expect(created.stdout).toContain('==> Created host volume safe\\u202egpj.exe\\u2066x\\u200by with ID');
    const list = await agent.dhv('volume', 'status');
    expect(list.stdout).toContain('safe\\u202egpj.exe\\u2066x\\u200by');
    expect(created.stdout + list.stdout).not.toMatch(/[\u202e\u2066\u200b]/);
    expect((await agent.json('volume', 'status'))[0].Name).toBe(name);
  });

  it('a 200 KB name is refused before any plugin runs, naming the kernel limit', async ({ agent }) => {
    await agent.plugin('p', '#!/bin/sh\necho ran > "$DHV_VOLUMES_DIR/../ran"\necho \'{"version": "1.0.0"}\'\n');
    const run = await agent.dhv(
      'volume',
      'create',
      await agent.file('big.json', JSON.stringify({ type: 'host', name: 'n'.repeat(200_000), plugin_id: 'p' })),
    );
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/name is too large: DHV_VOLUME_NAME would be 200017 bytes.*MAX_ARG_STRLEN/);
    expect(run.stderr.length).toBeLessThan(2000);
    expect(existsSync(join(agent.dataDir, 'ran'))).toBe(false);
  });
});
