import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { Agent } from '../../packages/harness/src/agent/agent.js';
import type { Jobs } from '../../packages/harness/src/agent/allocations/jobs.js';
import type { AgentConfig } from '../../packages/harness/src/config/agent-config.js';
import type { Job } from '../../packages/harness/src/jobs/job-spec.js';
import { readJobText } from '../../packages/harness/src/jobs/read-job-file.js';
import { volumeSpecFromText } from '../../packages/harness/src/volume-specs/volume-spec.js';
import { killTasks } from './job-tasks.js';
import { removeTempDir, tempDir } from './temp-dir.js';

/** A real-agent scenario (test/vectors/real-agent/): its files and what each step printed. */
export interface RealAgentScenario {
  files: Record<string, string>;
  steps: Array<{ run: string; exit: number; stdout: string; stderr: string }>;
}

export const realAgentScenario = (name: string): RealAgentScenario =>
  JSON.parse(readFileSync(new URL(`../vectors/real-agent/${name}`, import.meta.url), 'utf8')) as RealAgentScenario;

/**
 * The simulated agent opened in the test's own process, in a temp dir of its own, with the
 * built-in mkdir plugin (which runs in process) for its volumes; tasks still run as processes
 * (a small supervisor each). `close` kills every task its jobs started and removes the dir.
 */
export interface JobsAgent {
  agent: Agent;
  jobs: Jobs;
  config: AgentConfig;
  /** Creates a volume from a scenario's spec, its plugin swapped for the built-in mkdir. */
  createVolume(specText: string): Promise<{ ID: string; Name: string }>;
  close(): Promise<void>;
}

export async function openJobsAgent(options: { execAllowCaps?: string[] } = {}): Promise<JobsAgent> {
  const dir = await tempDir('jobs-in-process');
  const config: AgentConfig = {
    dataDir: `${dir}/data`,
    pluginDir: `${dir}/plugins`,
    volumesDir: `${dir}/volumes`,
    nodePool: 'default',
    hostVolumes: [],
    ...(options.execAllowCaps ? { execAllowCaps: options.execAllowCaps } : {}),
  };
  await mkdir(config.pluginDir);
  const agent = await Agent.open(config);
  await agent.start();
  return {
    agent,
    jobs: agent.jobs(),
    config,
    async createVolume(specText) {
      const spec = volumeSpecFromText(specText.replace(/plugin_id *= *"[^"]*"/, 'plugin_id = "mkdir"'), 'create');
      return (await agent.createVolume(spec)).volume;
    },
    async close() {
      await killTasks(config.dataDir);
      await agent.shutdown().catch(() => {});
      await removeTempDir(dir);
    },
  };
}

/**
 * A scenario's job as dhv reads it, its tasks made `raw_exec` tasks without `volume_mount`: the
 * group still asks for the same volumes (placement, usage and sticky claims are unchanged, as
 * under Nomad, where such a task runs normally and its volume counts as in use), and the task
 * runs on the host, so no test needs root or a mount.
 */
export async function jobOnHost(text: string, file = 'job.nomad.hcl'): Promise<Job> {
  const onHost = text.replaceAll('driver = "exec"', 'driver = "raw_exec"').replace(/volume_mount \{[^}]*\}/g, '');
  return (await readJobText(onHost, file)).job;
}

/** A job read as `dhv job run` reads it, unchanged. */
export async function jobAsWritten(text: string, file = 'job.nomad.hcl'): Promise<Job> {
  return (await readJobText(text, file)).job;
}
