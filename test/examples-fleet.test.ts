import { spawn } from 'node:child_process';
import { chmod, copyFile, mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJobFile } from '../packages/harness/src/jobs/read-job-file.js';
import { jobProblems } from '../packages/harness/src/jobs/validate-job.js';
import { tempAgent } from './support/dhv-agent.js';
import { DHV_BIN, HARNESS_FIXTURES, REFERENCE_MKDIR, REPO_ROOT, removeTempDir, tempDir } from './support/kit.js';

/** The README's fleet examples: the sysbatch job that runs `dhv check` on every client, and the versions listing. */

const JOB = join(REPO_ROOT, 'examples/fleet-check.nomad.hcl');
const VERSIONS = join(REPO_ROOT, 'examples/fleet-plugin-versions.sh');

function sh(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', args, { env: { ...process.env, NO_COLOR: '1', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** An executable at `path` that runs this checkout's dhv with the arguments it is given. */
async function dhvAt(path: string, extra = ''): Promise<void> {
  await writeFile(
    path,
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(DHV_BIN)} "$@"${extra}\n`,
  );
  await chmod(path, 0o755);
}

describe('examples/fleet-check.nomad.hcl', () => {
  it("reads as a sysbatch job of one raw_exec task, valid by Nomad's rules, with only node_pool and env beyond what dhv runs", async () => {
    const { job, unmodelled } = await readJobFile(JOB);
    expect(job).toMatchObject({ ID: 'dhv-check-fleet', Type: 'sysbatch' });
    expect(jobProblems(job)).toEqual([]);
    expect(job.TaskGroups).toHaveLength(1);
    expect(job.TaskGroups[0]!.Tasks).toMatchObject([{ Driver: 'raw_exec', Config: { command: '/bin/sh' } }]);
    expect(unmodelled.sort()).toEqual(['group "check" task "check": env', 'job "dhv-check-fleet": node_pool']);
  });

  it('its task checks each executable file of the plugin dir, says which, and fails when one fails', async () => {
    const dir = await tempDir('fleet-check');
    try {
      const plugins = join(dir, 'plugins');
      await mkdir(plugins);
      await copyFile(join(HARNESS_FIXTURES, 'invalid-version'), join(plugins, 'invalid-version'));
      await chmod(join(plugins, 'invalid-version'), 0o755);
      await writeFile(join(plugins, 'notes.txt'), 'not a plugin\n');
      await dhvAt(join(dir, 'dhv'));
      const { job } = await readJobFile(JOB);
      const script = (job.TaskGroups[0]!.Tasks[0]!.Config as { args: string[] }).args[1]!;
      const run = await sh(['-c', script], { DHV: join(dir, 'dhv'), PLUGIN_DIR: plugins, CAPACITY_MAX: '64MiB' });
      expect(run.stdout).toContain(`== ${hostname()}: ${join(plugins, 'invalid-version')}\n`);
      expect(run.stdout).not.toContain('notes.txt');
      expect(run.stdout).toMatch(/FAIL +discovery/);
      expect(run.code).toBe(1);
    } finally {
      await removeTempDir(dir);
    }
  }, 120_000);
});

describe('examples/fleet-plugin-versions.sh', () => {
  it("lists each client's plugins and versions from the nodes' plugins.host_volume.<ID>.version attributes", async () => {
    const agent = await tempAgent();
    try {
      await copyFile(REFERENCE_MKDIR, join(agent.pluginDir, 'dhv-mkdir'));
      const node = await agent.json<{ ID: string; Name: string; Attributes: Record<string, string> }>('node', 'status');
      // Nomad's CLI as the script uses it: the node list (stubs, an ID each), and one node by ID (dhv's, Nomad's shape).
      const bin = join(agent.dir, 'bin');
      await mkdir(bin);
      await writeFile(
        join(bin, 'nomad'),
        `#!/bin/sh\nif [ "$#" -eq 3 ] && [ "$1 $2 $3" = "node status -json" ]; then echo '[{"ID": "${node.ID}"}]'; exit 0; fi\n` +
          `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(DHV_BIN)} "$@" --data-dir ${JSON.stringify(agent.dataDir)}\n`,
      );
      await chmod(join(bin, 'nomad'), 0o755);
      const run = await sh([VERSIONS], { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`, DHV_DATA_DIR: '' });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(
        `${node.Name}\tdhv-mkdir\t${node.Attributes['plugins.host_volume.dhv-mkdir.version']}\n` +
          `${node.Name}\tmkdir\t${node.Attributes['plugins.host_volume.mkdir.version']}\n`,
      );
    } finally {
      await agent.cleanup();
    }
  }, 60_000);
});
