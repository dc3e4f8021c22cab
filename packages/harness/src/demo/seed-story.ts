import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatSize } from '@dhv/sdk/plugin';
import fs from 'fs-extra';
import { Agent, type StartReport } from '../agent/agent.js';
import type { HostVolumeConfig } from '../agent/host-volumes.js';
import { CleanupJournal, loopDevicesBackedBelow, mountsBelow, releaseEverythingBelow } from '@dhv/sdk/host';
import type { HostVolume } from '../agent/volume-view.js';
import { loadAgentConfig } from '../config/agent-config.js';
import { readVolumeSpec } from '../volume-specs/volume-spec.js';
import { findReferencePlugin, type ReferencePluginId } from './reference-plugins.js';
import { dataDirLayout } from '../config/data-dir.js';

/** One step of the story: what it did, the `dhv` command that does the same by hand, and what came of it. */
export interface DemoStep {
  title: string;
  command: string;
  ok: boolean;
  error?: string;
}

export interface DemoVolume {
  name: string;
  pluginId: ReferencePluginId;
  id: string;
  hostPath: string;
  capacityBytes: bigint;
  /** Its state after the restart. */
  stateAfterRestart?: string;
  fileSurvived?: boolean;
}

export interface DemoReport {
  ok: boolean;
  workDir: string;
  loopback: { ran: boolean; skipped?: string };
  steps: DemoStep[];
  volumes: DemoVolume[];
  /** The node's HostVolumes after the creates, as `dhv node status --json` shows them. */
  hostVolumes: Record<string, HostVolumeConfig>;
  /** What the restart with a simulated reboot did. */
  restart?: Pick<StartReport, 'restored' | 'failed' | 'reboot'>;
  /** What was checked at the end: no mounts, no loop devices, the temp dir gone. */
  leftBehind: string[];
  error?: string;
}

export interface DemoOptions {
  /** Called with each line of the story as it goes. */
  onLine?: (line: string) => void;
  /** Run the loopback part; default: when running as root. */
  loopback?: boolean;
  /** Aborting stops the story (the plugin in flight is killed); the cleanup still deletes the volumes. */
  signal?: AbortSignal;
  /** Aborting makes the cleanup skip the volumes' deletes and release everything by force. */
  hurry?: AbortSignal;
}

const SPECS = {
  scratch: {
    pluginId: 'dhv-mkdir',
    text: 'type      = "host"\nname      = "scratch"\nplugin_id = "dhv-mkdir"\n\nparameters {\n  mode = "0755"\n}\n',
  },
  test: {
    pluginId: 'dhv-loopback',
    text: 'type         = "host"\nname         = "test"\nplugin_id    = "dhv-loopback"\ncapacity_min = "47MiB"\ncapacity_max = "47MiB"\n',
  },
} as const;

type VolumeName = keyof typeof SPECS;

/** What every step of the story shares: where it runs, what it reports, and how it says and runs a step. */
interface Story {
  workDir: string;
  dataDir: string;
  volumesDir: string;
  pluginDir: string;
  /** The agent config file. */
  config: string;
  /** The flags each step's `dhv` command needs. */
  flags: string;
  report: DemoReport;
  say: (line: string) => void;
  /** Runs one step: says its title and command, and records whether it held. */
  step: <T>(title: string, command: string, body: () => Promise<T>) => Promise<T>;
}

/**
 * The whole life of dynamic host volumes in a temporary agent, through the harness's
 * own library (the Agent the `dhv` commands use): fingerprint, create a dhv-mkdir
 * volume and (as root) a 47 MiB dhv-loopback volume, see them in HostVolumes beside a
 * static volume, write a file into each, restart with a simulated reboot, see them
 * restored with the files intact, delete them, and leave nothing behind. The agent's
 * config and the volume specs are written as files, so each step can be repeated by hand
 * with the command the story names.
 */
export async function runSeedStory(options: DemoOptions = {}): Promise<DemoReport> {
  const journal = CleanupJournal.forThisProcess();
  // Recorded before it is made: a demo killed outright is cleaned up by the next dhv command.
  const { path: workDir } = await journal.makeFolder(tmpdir(), 'dhv-demo-');
  const story = newStory(workDir, options);
  let agent: Agent | undefined;
  // Shutting the agent down kills the plugin in flight; the step it was in then fails.
  const onAbort = () => void agent?.shutdown();
  options.signal?.addEventListener('abort', onAbort);
  try {
    const names = await writeAgentFiles(story, options.loopback);
    agent = await Agent.open(await loadAgentConfig({ config: story.config, dataDir: story.dataDir }), {
      onWarning: (w) => story.say(`    warning: ${w}`),
    });
    await fingerprint(story, agent, names);
    for (const name of names) await createVolume(story, agent, name);
    await showHostVolumes(story, agent, names);
    await writeFiles(story);
    await restartAfterReboot(story, agent);
    await findFilesAfterRestart(story, agent);
    for (const v of story.report.volumes) await deleteVolume(story, agent, v);
    story.report.ok = true;
  } catch (err) {
    story.report.error = err instanceof Error ? err.message : String(err);
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    await leaveNothing(story, agent, journal, options.hurry);
  }
  return story.report;
}

function newStory(workDir: string, options: DemoOptions): Story {
  const say = options.onLine ?? (() => {});
  const report: DemoReport = {
    ok: false,
    workDir,
    loopback: { ran: false },
    steps: [],
    volumes: [],
    hostVolumes: {},
    leftBehind: [],
  };
  const dataDir = join(workDir, 'data');
  const config = join(workDir, 'agent.hcl');
  const step = async <T>(title: string, command: string, body: () => Promise<T>): Promise<T> => {
    options.signal?.throwIfAborted();
    say(`\n==> ${title}\n    (by hand: ${command})`);
    try {
      const result = await body();
      report.steps.push({ title, command, ok: true });
      return result;
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      report.steps.push({ title, command, ok: false, error });
      throw new Error(`${title}: ${error}`, { cause: err });
    }
  };
  return { workDir, dataDir, ...dataDirLayout(dataDir), config, flags: `--config ${config}`, report, say, step };
}

/** The plugins copied into the agent's plugin dir, its config and the volume specs written: what a user would set up by hand. Returns the volumes the story makes. */
async function writeAgentFiles(story: Story, loopback: boolean | undefined): Promise<VolumeName[]> {
  const { workDir, pluginDir, say } = story;
  const mkdirPlugin = await findReferencePlugin('dhv-mkdir');
  if ('missing' in mkdirPlugin)
    throw new Error(`the dhv-mkdir plugin is not there (${mkdirPlugin.missing}); ${mkdirPlugin.fix}`);
  const loopbackSkip = await loopbackSkipReason(loopback);
  const loopbackPlugin = loopbackSkip ? undefined : await findReferencePlugin('dhv-loopback');
  if (loopbackPlugin && 'missing' in loopbackPlugin) {
    throw new Error(`the dhv-loopback plugin is not there (${loopbackPlugin.missing}); ${loopbackPlugin.fix}`);
  }
  story.report.loopback = loopbackSkip ? { ran: false, skipped: loopbackSkip } : { ran: true };

  say(`==> A temporary agent in ${workDir}`);
  await fs.copy(mkdirPlugin.file, join(pluginDir, 'dhv-mkdir'));
  if (loopbackPlugin) await fs.copy(loopbackPlugin.file, join(pluginDir, 'dhv-loopback'));
  await fs.ensureDir(join(workDir, 'cloud-img'));
  await fs.writeFile(
    story.config,
    `data_dir = "${story.dataDir}"\n\nclient {\n  host_volume "cloud-img" {\n    path      = "${join(workDir, 'cloud-img')}"\n    read_only = false\n  }\n}\n`,
  );
  const names: VolumeName[] = loopbackPlugin ? ['scratch', 'test'] : ['scratch'];
  for (const name of names) await fs.writeFile(join(workDir, `${name}.volume.hcl`), SPECS[name].text);
  say(
    `    agent.hcl: a static host volume "cloud-img"; plugins dhv-mkdir${loopbackPlugin ? ' and dhv-loopback' : ''} in ${pluginDir}`,
  );
  if (loopbackSkip) say(`    skipping the dhv-loopback volume: ${loopbackSkip}`);
  return names;
}

function fingerprint(story: Story, agent: Agent, names: readonly VolumeName[]): Promise<void> {
  return story.step('Fingerprint the plugins', `dhv agent fingerprint ${story.flags}`, async () => {
    const fingerprint = await agent.fingerprint();
    for (const [attribute, value] of Object.entries(fingerprint.attributes)) story.say(`    ${attribute} = ${value}`);
    for (const s of fingerprint.skipped) story.say(`    skipped ${s.id}: ${s.reason}`);
    const missing = names.map((n) => SPECS[n].pluginId).filter((id) => !fingerprint.plugins.some((p) => p.id === id));
    if (missing.length > 0) throw new Error(`the agent did not fingerprint ${missing.join(', ')}`);
  });
}

function createVolume(story: Story, agent: Agent, name: VolumeName): Promise<void> {
  const spec = join(story.workDir, `${name}.volume.hcl`);
  const { pluginId } = SPECS[name];
  return story.step(`Create volume ${name} with ${pluginId}`, `dhv volume create ${spec} ${story.flags}`, async () => {
    const { volume } = await agent.createVolume(await readVolumeSpec(spec, 'create'));
    story.report.volumes.push({
      name,
      pluginId,
      id: volume.ID,
      hostPath: volume.HostPath,
      capacityBytes: volume.CapacityBytes,
    });
    story.say(`    ✓ ${volume.ID} ${volume.State} at ${volume.HostPath} (${formatSize(volume.CapacityBytes)})`);
  });
}

function showHostVolumes(story: Story, agent: Agent, names: readonly VolumeName[]): Promise<void> {
  return story.step("The node's HostVolumes", `dhv node status --json ${story.flags} | jq .HostVolumes`, async () => {
    const { node } = await agent.status();
    story.report.hostVolumes = node.HostVolumes;
    story.say(JSON.stringify(node.HostVolumes, null, 2).replace(/^/gm, '    '));
    const absent = ['cloud-img', ...names].filter((n) => !(n in node.HostVolumes));
    if (absent.length > 0) throw new Error(`HostVolumes lacks ${absent.join(', ')}`);
  });
}

function writeFiles(story: Story): Promise<void> {
  return story.step('Write a file into each volume', 'echo "hello from <name>" > <host path>/hello.txt', async () => {
    for (const v of story.report.volumes) {
      await fs.writeFile(join(v.hostPath, 'hello.txt'), `hello from ${v.name}\n`);
      story.say(`    ${join(v.hostPath, 'hello.txt')}`);
    }
  });
}

function restartAfterReboot(story: Story, agent: Agent): Promise<void> {
  const { say } = story;
  return story.step(
    'Restart the agent after a simulated host reboot',
    `dhv agent restart --reboot ${story.flags}`,
    async () => {
      const restart = await agent.restart({ reboot: true });
      story.report.restart = {
        restored: restart.restored,
        failed: restart.failed,
        ...(restart.reboot ? { reboot: restart.reboot } : {}),
      };
      if (restart.reboot)
        say(
          `    rebooted: unmounted ${restart.reboot.unmounted.length} mount(s), detached ${restart.reboot.detached.length} loop device(s)`,
        );
      say(`    restored ${restart.restored.length} of ${restart.restored.length + restart.failed.length} volume(s)`);
      for (const f of restart.failed) say(`    ✗ ${f.volume.Name}: ${f.error.message}`);
      if (restart.failed.length > 0) throw new Error(`${restart.failed.length} volume(s) were not restored`);
    },
  );
}

function findFilesAfterRestart(story: Story, agent: Agent): Promise<void> {
  return story.step('Every volume is back, with its file', `dhv volume status ${story.flags}`, async () => {
    const after = new Map((await agent.volumes()).map((v: HostVolume) => [v.ID, v]));
    for (const v of story.report.volumes) {
      const now = after.get(v.id);
      v.stateAfterRestart = now?.State ?? 'missing';
      const text = await fs
        .readFile(join(now?.HostPath ?? v.hostPath, 'hello.txt'), 'utf8')
        .catch((err: Error) => `(unreadable: ${err.message})`);
      v.fileSurvived = text === `hello from ${v.name}\n`;
      story.say(
        `    ${v.fileSurvived ? '✓' : '✗'} ${v.name} ${v.stateAfterRestart}: hello.txt says ${JSON.stringify(text.trimEnd())}`,
      );
    }
    const lost = story.report.volumes.filter((v) => v.stateAfterRestart !== 'ready' || !v.fileSurvived);
    if (lost.length > 0) throw new Error(`volume(s) ${lost.map((v) => v.name).join(', ')} did not come back intact`);
    story.say('    ✓ every file survived the restart');
  });
}

function deleteVolume(story: Story, agent: Agent, v: DemoVolume): Promise<void> {
  return story.step(`Delete volume ${v.name}`, `dhv volume delete ${v.id} ${story.flags}`, async () => {
    await agent.deleteVolume(v.id);
    story.say(`    ✓ deleted ${v.id}`);
  });
}

/** Deletes what the story left (unless hurried), releases what a failed step left mounted, and says what is left behind. */
async function leaveNothing(
  story: Story,
  agent: Agent | undefined,
  journal: CleanupJournal,
  hurry: AbortSignal | undefined,
): Promise<void> {
  const { report, say } = story;
  if (agent) {
    const left = hurry?.aborted ? [] : await agent.volumes().catch(() => []);
    for (const v of left) if (!hurry?.aborted) await agent.deleteVolume(v.ID).catch(() => {});
    await agent.shutdown();
  }
  // Whatever a failed step left mounted or attached goes the way a reboot takes it.
  await releaseEverythingBelow(story.volumesDir).catch(() => {});
  report.leftBehind = await leftovers(story.workDir, story.volumesDir, journal);
  if (report.leftBehind.length > 0) report.ok = false;
  say(
    report.leftBehind.length === 0
      ? `\n==> Nothing left behind: no mounts or loop devices under ${story.workDir}, and the directory is removed`
      : `\n==> Left behind: ${report.leftBehind.join('; ')}`,
  );
  if (report.error) say(`\nDemo failed: ${report.error}`);
}

async function loopbackSkipReason(wanted: boolean | undefined): Promise<string | undefined> {
  if (wanted === false) return 'turned off (--no-loopback)';
  if (process.getuid?.() !== 0)
    return 'the loopback plugin attaches loop devices and mounts filesystems, which needs root; run the demo as root to see it';
  if (!(await fs.pathExists('/dev/loop-control')))
    return 'this host has no loop devices (/dev/loop-control is missing)';
  return undefined;
}

async function leftovers(workDir: string, volumesDir: string, journal: CleanupJournal): Promise<string[]> {
  const found: string[] = [];
  for (const m of await mountsBelow(workDir)) found.push(`mount ${m.mountPoint}`);
  for (const l of await loopDevicesBackedBelow(volumesDir)) found.push(`loop device ${l.device} (${l.backingFile})`);
  if (found.length === 0) {
    // The reference plugins' records of its volumes dir go with it (a delete that never ran leaves them).
    found.push(...(await journal.removeFolder(workDir)));
    if (await fs.pathExists(workDir)) found.push(`directory ${workDir}`);
  } else {
    found.push(`directory ${workDir} (kept because of the above)`);
  }
  return found;
}
