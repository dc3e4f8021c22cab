import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loopDevicesBackedUnder, mountsUnder, simulateReboot } from '../agent/reboot.js';
import { DHV_BIN, findReferencePlugin } from './reference-plugins.js';
import { dataDirLayout } from '../config/data-dir.js';

export interface DemoStep {
  command: string;
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface DemoReport {
  ok: boolean;
  workDir: string;
  loopback: { ran: boolean; skipped?: string };
  steps: DemoStep[];
  /** What was checked at the end: no mounts, no loop devices, the temp dir gone. */
  leftBehind: string[];
  error?: string;
}

export interface DemoOptions {
  /** Called as the story goes: a narrative line, or a step with its output. */
  onLine?: (line: string) => void;
  /** Run the loopback part; default: when running as root. */
  loopback?: boolean;
}

/**
 * The whole host volume story in a temporary agent, through the real `dhv` executable: fingerprint,
 * create a dhv-mkdir volume and (as root) a 47 MiB dhv-loopback volume, see them in
 * HostVolumes beside a static volume, write a file into each, restart with a simulated
 * reboot, see them restored with the files intact, delete them, and leave nothing behind.
 */
export async function runSeedStory(options: DemoOptions = {}): Promise<DemoReport> {
  const say = options.onLine ?? (() => {});
  const workDir = await mkdtemp(join(tmpdir(), 'dhv-demo-'));
  const report: DemoReport = { ok: false, workDir, loopback: { ran: false }, steps: [], leftBehind: [] };
  const dataDir = join(workDir, 'data');
  const { pluginDir, volumesDir } = dataDirLayout(dataDir);

  const dhv = async (...args: string[]): Promise<DemoStep> => dhvShown(`dhv ${args.join(' ')}`, args, true);
  const dhvShown = async (shown: string, args: string[], printStdout: boolean): Promise<DemoStep> => {
    const command = `dhv ${args.join(' ')}`;
    say(`\n$ ${shown}`);
    const step = await run(workDir, [...args, '--config', 'agent.hcl']);
    report.steps.push({ command, ...step });
    if (printStdout && step.stdout.trim() !== '') say(step.stdout.trimEnd());
    if (step.stderr.trim() !== '') say(step.stderr.trimEnd());
    if (step.exitCode !== 0) throw new Error(`${command} failed with exit code ${step.exitCode}`);
    return { command, ...step };
  };

  const created: string[] = [];
  try {
    const mkdirPlugin = await findReferencePlugin('dhv-mkdir');
    if ('missing' in mkdirPlugin) throw new Error(`the dhv-mkdir plugin is not built (${mkdirPlugin.missing}); run: ${mkdirPlugin.build}`);
    const loopbackSkip = await loopbackSkipReason(options.loopback);
    const loopbackPlugin = loopbackSkip ? undefined : await findReferencePlugin('dhv-loopback');
    if (loopbackPlugin && 'missing' in loopbackPlugin) {
      throw new Error(`the dhv-loopback plugin is not built (${loopbackPlugin.missing}); run: ${loopbackPlugin.build}`);
    }
    report.loopback = loopbackSkip ? { ran: false, skipped: loopbackSkip } : { ran: true };

    say(`==> A temporary agent in ${workDir}`);
    await mkdir(pluginDir, { recursive: true });
    await mkdir(join(workDir, 'cloud-img'));
    await copyFile(mkdirPlugin.file, join(pluginDir, 'dhv-mkdir'));
    if (loopbackPlugin) await copyFile(loopbackPlugin.file, join(pluginDir, 'dhv-loopback'));
    await writeFile(
      join(workDir, 'agent.hcl'),
      `data_dir = "${dataDir}"\n\nclient {\n  host_volume "cloud-img" {\n    path      = "${join(workDir, 'cloud-img')}"\n    read_only = false\n  }\n}\n`,
    );
    await writeFile(join(workDir, 'scratch.volume.hcl'), `type      = "host"\nname      = "scratch"\nplugin_id = "dhv-mkdir"\n\nparameters {\n  mode = "0755"\n}\n`);
    await writeFile(join(workDir, 'test.volume.hcl'), `type         = "host"\nname         = "test"\nplugin_id    = "dhv-loopback"\ncapacity_min = "47MiB"\n`);
    say(`    agent.hcl: a static host volume "cloud-img"; plugins dhv-mkdir${loopbackPlugin ? ' and dhv-loopback' : ''} in ${pluginDir}`);
    if (loopbackSkip) say(`    skipping the dhv-loopback volume: ${loopbackSkip}`);

    await dhv('agent', 'fingerprint');
    const specs = ['scratch.volume.hcl', ...(loopbackPlugin ? ['test.volume.hcl'] : [])];
    const volumes: Array<{ id: string; path: string; name: string }> = [];
    for (const spec of specs) {
      const step = await dhv('volume', 'create', spec);
      const id = /with ID ([0-9a-f-]{36})/.exec(step.stdout)?.[1];
      const path = /Host Path = (\S+)/.exec(step.stdout)?.[1];
      if (!id || !path) throw new Error(`could not read the volume ID and path from: ${step.stdout}`);
      created.push(id);
      volumes.push({ id, path, name: spec.split('.')[0]! });
    }
    await dhv('node', 'status');
    const node = await dhvShown(`dhv node status --json | jq '.HostVolumes'`, ['node', 'status', '--json'], false);
    say(JSON.stringify(JSON.parse(node.stdout).HostVolumes, null, 2));

    for (const v of volumes) {
      const file = join(v.path, 'hello.txt');
      await writeFile(file, `hello from ${v.name}\n`);
      say(`\n$ echo "hello from ${v.name}" > ${file}`);
    }

    await dhv('agent', 'restart', '--reboot');
    await dhv('volume', 'status');
    for (const v of volumes) {
      const text = await readFile(join(v.path, 'hello.txt'), 'utf8').catch((err: Error) => `(unreadable: ${err.message})`);
      say(`\n$ cat ${join(v.path, 'hello.txt')}\n${text.trimEnd()}`);
      if (text !== `hello from ${v.name}\n`) throw new Error(`the file written into volume ${v.name} did not survive the restart`);
    }
    say('  ✓ every file survived the restart');

    for (const v of volumes) {
      await dhv('volume', 'delete', v.id);
      created.splice(created.indexOf(v.id), 1);
    }
    report.ok = true;
  } catch (err) {
    report.error = (err as Error).message;
  } finally {
    for (const id of created) await run(workDir, ['volume', 'delete', id, '--config', 'agent.hcl']).catch(() => {});
    // Whatever a failed step left mounted or attached goes the way a reboot takes it.
    await simulateReboot(volumesDir).catch(() => {});
    report.leftBehind = await leftovers(workDir, volumesDir);
    if (report.leftBehind.length > 0) report.ok = false;
  }
  say(
    report.leftBehind.length === 0
      ? `\n==> Nothing left behind: no mounts or loop devices under ${workDir}, and the directory is removed`
      : `\n==> Left behind: ${report.leftBehind.join('; ')}`,
  );
  if (report.error) say(`\nDemo failed: ${report.error}`);
  return report;
}

async function loopbackSkipReason(wanted: boolean | undefined): Promise<string | undefined> {
  if (wanted === false) return 'turned off (--no-loopback)';
  if (process.getuid?.() !== 0) return 'the loopback plugin attaches loop devices and mounts filesystems, which needs root; run the demo as root to see it';
  try {
    await stat('/dev/loop-control');
  } catch {
    return 'this host has no loop devices (/dev/loop-control is missing)';
  }
  return undefined;
}

async function leftovers(workDir: string, volumesDir: string): Promise<string[]> {
  const found: string[] = [];
  for (const m of await mountsUnder(workDir)) found.push(`mount ${m}`);
  for (const l of await loopDevicesBackedUnder(volumesDir)) found.push(`loop device ${l.device} (${l.backingFile})`);
  if (found.length === 0) {
    await rm(workDir, { recursive: true, force: true });
    const still = await stat(workDir).then(() => true, () => false);
    if (still) found.push(`directory ${workDir}`);
  } else {
    found.push(`directory ${workDir} (kept because of the above)`);
  }
  return found;
}

function run(cwd: string, args: string[]): Promise<Omit<DemoStep, 'command'>> {
  const env = { ...process.env };
  delete env.DHV_DATA_DIR; // the demo's agent.hcl names its own data dir
  return new Promise((resolve) => {
    execFile(process.execPath, [DHV_BIN, ...args], { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: unknown }).code as number | undefined) : 0;
      resolve({ exitCode: typeof code === 'number' ? code : 1, stdout, stderr });
    });
  });
}
