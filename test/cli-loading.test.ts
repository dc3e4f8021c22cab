import { spawn } from 'node:child_process';
import { copyFile, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { execa } from 'execa';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DHV_BIN, REPO_ROOT, runDhv, tempDir, removeTempDir } from './support/kit.js';
import { tempAgent, volumeHcl, type TempAgent } from './support/dhv-agent.js';

/**
 * dhv starts from its bundle by loading only the command that runs (every test spawns many
 * dhv processes), with the help of every command taken from the oclif manifest the build
 * writes beside the bundle, which is never stale.
 */

const HARNESS = join(REPO_ROOT, 'packages/harness');
const MANIFEST = join(HARNESS, 'oclif.manifest.json');

let dir: string;
beforeEach(async () => {
  dir = await tempDir('cli-loading');
  // volume status only reads: it needs a data dir that is there (it never makes one).
  await mkdir(join(dir, 'data'));
});
afterEach(async () => {
  await removeTempDir(dir);
});

/**
 * The modules a `dhv` run loads, as resolved: ES modules seen through a loader hook, and
 * CommonJS ones (the bundle's command modules are) through a preload that watches require.
 */
async function modulesImportedBy(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ exitCode: number | null; modules: string[] }> {
  const hook = join(dir, 'hook.mjs');
  await writeFile(
    hook,
    `export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write('IMPORT ' + r.url + '\\n'); return r; }\n`,
  );
  const register = join(dir, 'register.mjs');
  await writeFile(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(`file://${hook}`)});\n`,
  );
  const requires = join(dir, 'requires.cjs');
  await writeFile(
    requires,
    `const Module = require('node:module');\nconst load = Module._load;\n` +
      `Module._load = function (request, parent, isMain) {\n` +
      `  try { process.stderr.write('IMPORT file://' + Module._resolveFilename(request, parent, isMain) + '\\n'); } catch {}\n` +
      `  return load.apply(this, arguments);\n};\n`,
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', requires, '--import', register, DHV_BIN, ...args], {
      env: { ...process.env, NO_COLOR: '1', DHV_DATA_DIR: join(dir, 'data'), ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.once('error', reject);
    child.once('close', (exitCode) =>
      resolve({
        exitCode,
        modules: stderr
          .split('\n')
          .filter((l) => l.startsWith('IMPORT file://'))
          .map((l) => l.slice('IMPORT file://'.length)),
      }),
    );
  });
}

/**
 * The command modules among `modules`, named from the commands' folder: a command's entry in
 * the bundle the manifest points at, a compiled command, or the list of them all.
 */
async function commandModules(modules: string[]): Promise<string[]> {
  const manifest = JSON.parse(await readFile(MANIFEST, 'utf8')) as {
    commands: Record<string, { relativePath: string[] }>;
  };
  const names = new Map<string, string>();
  for (const { relativePath } of Object.values(manifest.commands)) {
    const name = relativePath
      .slice(relativePath.indexOf('commands') + 1)
      .join('/')
      .replace(/\.c?js$/, '');
    names.set(join(HARNESS, ...relativePath), name);
    names.set(join(HARNESS, 'dist/commands', `${name}.js`), name);
  }
  names.set(join(HARNESS, 'dist/commands/index.js'), 'index');
  return [...new Set(modules.flatMap((m) => names.get(m) ?? []))].sort();
}

describe('dhv start-up', () => {
  it('imports the module of the command that runs and no other command', async () => {
    // Through oclif (help, and any line the lean start-up leaves to it; DHV_LEAN=0 sends it
    // all): oclif runs the command from the bundle.
    const claims = await modulesImportedBy(['volume', 'claim', 'list'], { DHV_LEAN: '0' });
    expect(claims.exitCode).toBe(0);
    expect(await commandModules(claims.modules)).toEqual(['volume/claim/list']);
    // From the bundle alone: no compiled module of the harness is loaded as it is.
    const { dhvCli } = JSON.parse(await readFile(MANIFEST, 'utf8')) as { dhvCli: string };
    const dist = claims.modules.filter((m) => m.startsWith(join(HARNESS, 'dist/')));
    expect(dist.length).toBeGreaterThan(0);
    expect(dist.filter((m) => !m.startsWith(join(HARNESS, dhvCli, '/')))).toEqual([]);
    expect(claims.modules.some((m) => /\/node_modules\/(fast-check|esbuild)\//.test(m))).toBe(false);
  });

  it('runs a command from the lean bundle, without oclif, and gives oclif what it must answer', async () => {
    const status = await modulesImportedBy(['volume', 'status']);
    expect(status.exitCode).toBe(0);
    // Neither oclif's command module nor any module of the harness: the lean bundle is all.
    expect(await commandModules(status.modules)).toEqual([]);
    expect(status.modules.filter((m) => m.startsWith(join(HARNESS, 'dist/')))).toEqual([]);
    const { dhvCli, dhvLean } = JSON.parse(await readFile(MANIFEST, 'utf8')) as {
      dhvCli: string;
      dhvLean: Record<string, string>;
    };
    expect(dhvLean['volume:status']).toBeDefined();
    await stat(join(HARNESS, dhvCli, dhvLean['volume:status']!));
    // A restart too: at 10,000 volumes oclif's start-up was a fifth of its CPU.
    const restart = await modulesImportedBy(['agent', 'restart', '--json']);
    expect(restart.exitCode).toBe(0);
    expect(await commandModules(restart.modules)).toEqual([]);
    expect(restart.modules.filter((m) => m.startsWith(join(HARNESS, 'dist/')))).toEqual([]);
    // Every command but help has one: dhv check too, with flags given many times and --no-explore.
    const check = await modulesImportedBy([
      'check',
      join(HARNESS, 'fixtures/good-plugin'),
      ...['--only', 'discovery', '--skip', 'explore', '--no-explore', '--json'],
    ]);
    expect(check.exitCode).toBe(0);
    expect(await commandModules(check.modules)).toEqual([]);
    expect(check.modules.filter((m) => m.startsWith(join(HARNESS, 'dist/')))).toEqual([]);
    // A line the lean parser does not read as oclif would (a flag it does not know, help) goes to oclif.
    const unknown = await modulesImportedBy(['volume', 'status', '--no-such-flag']);
    expect(unknown.exitCode).toBe(2);
    expect(await commandModules(unknown.modules)).toEqual(['volume/status']);
    const words = await runDhv(['volume', 'status', '--no-such-flag'], { env: { DHV_DATA_DIR: join(dir, 'data') } });
    expect(words.stderr).toContain('Nonexistent flag: --no-such-flag');
  });

  it('imports no command module for --version, nor for the help of a command', async () => {
    const version = await modulesImportedBy(['--version']);
    expect(version.exitCode).toBe(0);
    expect(await commandModules(version.modules)).toEqual([]);
    const help = await modulesImportedBy(['volume', 'create', '--help']);
    expect(help.exitCode).toBe(0);
    expect(await commandModules(help.modules)).toEqual([]);
  });

  it('bundles again and writes the manifest again when they were not made from the compiled packages, so what runs is never stale', async () => {
    const real = await readFile(MANIFEST, 'utf8');
    const stale = JSON.parse(real) as { dhvBuild?: string; commands: Record<string, { summary?: string }> };
    stale.dhvBuild = 'an older compile';
    stale.commands.version!.summary = 'a summary from an older compile';
    const temp = `${MANIFEST}.stale-${process.pid}`;
    await writeFile(temp, JSON.stringify(stale));
    await rename(temp, MANIFEST);

    const help = await runDhv(['help']);
    expect(help.exitCode, help.stderr).toBe(0);
    expect(help.stdout).not.toContain('a summary from an older compile');
    expect(help.stdout).toMatch(/version\s+Show the version of dhv/);
    const rewritten = JSON.parse(await readFile(MANIFEST, 'utf8')) as { dhvBuild?: string; dhvCli: string };
    expect(rewritten.dhvBuild).toBe((JSON.parse(real) as { dhvBuild?: string }).dhvBuild);
    // Bundled again, into a bundle of its own (the one a dhv started before may still be loading from).
    expect(rewritten.dhvCli).not.toBe((JSON.parse(real) as { dhvCli: string }).dhvCli);
    await stat(join(HARNESS, rewritten.dhvCli, 'cli.cjs'));
  });

  it("keeps V8's compiled code beside the bundle, and a cache V8 refuses is only written again", async () => {
    // A copy of the bundle of its own, so no rebuild by another test's dhv changes it meanwhile.
    const { dhvCli } = JSON.parse(await readFile(MANIFEST, 'utf8')) as { dhvCli: string };
    const bundle = join(dir, 'cli.cjs');
    await copyFile(join(HARNESS, dhvCli, 'cli.cjs'), bundle);
    const cache = `${bundle}.v8-cache`;
    const load = () =>
      execa(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const { loadBundle } = await import(${JSON.stringify(join(HARNESS, 'bin/load-bundle.cjs'))});\n` +
            `if (typeof loadBundle(${JSON.stringify(bundle)}).execute !== 'function') process.exit(3);`,
        ],
        { reject: false },
      );
    const first = await load();
    expect(first.exitCode, first.stderr).toBe(0);
    const made = await readFile(cache);
    expect(made.length).toBeGreaterThan(10_000);

    await writeFile(cache, 'not a code cache');
    const refused = await load();
    expect(refused.exitCode, refused.stderr).toBe(0);
    expect(refused.stderr).toBe('');
    const written = await readFile(cache);
    expect(written.toString('latin1')).not.toBe('not a code cache');
    expect(written.length).toBeGreaterThan(10_000);

    // Taken as it is by the next run, which writes nothing.
    const { mtimeMs } = await stat(cache);
    const again = await load();
    expect(again.exitCode, again.stderr).toBe(0);
    expect((await stat(cache)).mtimeMs).toBe(mtimeMs);
    expect(await readFile(cache)).toEqual(written);
  });
});

describe('dhv started as a program', () => {
  it('starts node without NODE_EXTRA_CA_CERTS, which node would read at its start, and gives it back to what dhv runs', async () => {
    const env = { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, 'no-such-ca.pem') };
    // Node says when it read the file and could not load it: the check can fail.
    const plain = await execa(process.execPath, ['-e', '0'], { env, reject: false });
    expect(plain.stderr).toContain('Warning: Ignoring extra certs from');
    const run = await execa(DHV_BIN, ['--version'], { env, reject: false });
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/^@dhv\/harness\/\S+ linux-x64 node-v/);
    const restored = await execa(
      process.execPath,
      [
        '-e',
        `require(${JSON.stringify(join(HARNESS, 'bin/start.js'))}); console.log(JSON.stringify([process.env.NODE_EXTRA_CA_CERTS, process.env.DHV_NODE_EXTRA_CA_CERTS]))`,
      ],
      {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: undefined, DHV_NODE_EXTRA_CA_CERTS: '/etc/x.pem' },
        extendEnv: false,
      },
    );
    expect(JSON.parse(restored.stdout)).toEqual(['/etc/x.pem', null]);
  });
});

describe('the lean start-up of the commands a user scripts', () => {
  let agent: TempAgent;
  beforeEach(async () => {
    agent = await tempAgent();
  });
  afterEach(async () => {
    await agent.cleanup();
  });

  it('prints, and exits with, exactly what oclif running the same command does', async () => {
    const hostPath = join(agent.dir, 'registered');
    await mkdir(hostPath);
    const spec = await agent.file('reg.hcl', volumeHcl({ name: 'registered', host_path: hostPath }));
    const registered = await agent.dhv('volume', 'register', spec);
    expect(registered.exitCode, registered.stderr).toBe(0);
    const id = (await agent.json<Array<{ ID: string }>>('volume', 'status'))[0]!.ID;
    const lines = [
      ['volume', 'status'],
      ['volume', 'status', '-json'],
      ['volume', 'status', '--json', '-verbose'],
      ['volume', 'status', id.slice(0, 4)],
      ['volume', 'status', id, '-json'],
      ['volume', 'status', '-short', id],
      ['volume', 'status', '-t', '{{range .}}{{.Name}} {{.State}}{{end}}'],
      ['volume', 'status', '-namespace', '*'],
      ['volume', 'status', 'nope'],
      ['volume', 'status', 'nope', '-json'],
      ['volume', 'status', '-type', 'csi'],
      ['volume', 'status', id, '-node', 'x'],
      ['node', 'status'],
      ['node', 'status', '-self', '-json'],
      ['namespace', 'list'],
      ['namespace', 'list', '-json'],
      ['namespace', 'status', 'default'],
      ['namespace', 'status', 'nope'],
      ['job', 'status'],
      ['alloc', 'status', 'nope', '-json'],
      ['plugin', 'list', '--json'],
      ['version'],
      ['version', '--json'],
      ['agent', 'restart'],
      ['agent', 'restart', '-json'],
      ['agent', 'restart', '--reboot', '--json'],
    ];
    for (const line of lines) {
      const [lean, oclif] = [await agent.dhv(...line), await runDhvThroughOclif(agent, line)];
      expect({ line, exitCode: lean.exitCode, stdout: lean.stdout, stderr: lean.stderr }).toEqual({
        line,
        exitCode: oclif.exitCode,
        stdout: oclif.stdout,
        stderr: oclif.stderr,
      });
    }
  });

  it("reads no missing argument from a piped stdin, on either path, as Nomad's CLI never does", async () => {
    // A script's loop input is not a volume ID: oclif would take it as one.
    for (const lean of ['1', '0']) {
      const run = await runDhv(['volume', 'status', '-json', '--data-dir', agent.dataDir], {
        cwd: agent.dir,
        input: 'nope\n',
        env: { DHV_DATA_DIR: undefined, DHV_LEAN: lean },
      });
      expect({ lean, exitCode: run.exitCode, stderr: run.stderr, stdout: run.stdout.trim() }).toEqual({
        lean,
        exitCode: 0,
        stderr: '',
        stdout: '[]',
      });
    }
  });
});

/** `agent.dhv(...line)` with the lean start-up turned off (DHV_LEAN=0): what oclif does. */
function runDhvThroughOclif(agent: TempAgent, line: string[]) {
  return runDhv([...line, '--data-dir', agent.dataDir], {
    cwd: agent.dir,
    env: { DHV_DATA_DIR: undefined, DHV_LEAN: '0' },
  });
}
