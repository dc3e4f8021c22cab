/**
 * The real agent's claims scenario (test/vectors/real-agent/03-claims.json), step by step,
 * through the Agent and the job presenters in the test's own process: what Nomad 2.0.5
 * printed is what dhv must print. Its tasks run on the host (jobOnHost): placement, usage
 * claims and sticky claims depend on the group's volumes, not on the task's mount, so the
 * scenario needs neither root nor a mount. test/nomad-real-agent.test.ts replays the same
 * steps through `dhv` processes with the tasks as written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobRunReport } from '../packages/harness/src/agent/allocations/jobs.js';
import { allocStatus, jobStatus } from '../packages/harness/src/presenters/format-job.js';
import {
  jobAsWritten,
  jobOnHost,
  openJobsAgent,
  realAgentScenario,
  type JobsAgent,
} from './support/jobs-in-process.js';

const claims = realAgentScenario('03-claims.json');
const nomad = (step: number) => claims.steps[step]!;
/** The cause a simulator without an HTTP API prints: what is inside `Unexpected response code: 500 (...)`. */
const causeOf = (stderr: string) => /Unexpected response code: 500 \(([\s\S]*)\)\n*$/.exec(stderr)![1]!;
/** What the step's `sed -n '/^Placement Failure/,/^$/p'` kept of `nomad job status`. */
const placementBlockOf = (stdout: string) => stdout.slice(0, stdout.indexOf('\n\n'));

let a: JobsAgent;
const ids: Record<string, string> = {};
beforeAll(async () => {
  a = await openJobsAgent();
  for (const name of ['shared', 'ssw', 'pa0', 'pa1']) {
    const volume = await a.createVolume(claims.files[`${name}.hcl`]!);
    ids[volume.Name] = volume.ID;
  }
});
afterAll(() => a?.close());

async function run(file: string, { onHost = true } = {}): Promise<JobRunReport> {
  const text = claims.files[file]!;
  return a.jobs.run(onHost ? await jobOnHost(text, file) : await jobAsWritten(text, file));
}

async function statusText(job: string): Promise<string> {
  const record = (await a.jobs.job('default', job))!;
  const allocs = (await a.jobs.allocs()).filter((x) => x.JobID === job);
  return jobStatus(record, allocs);
}

/** `nomad job status <job> | sed -n '/^Placement Failure/,/^$/p'`, as dhv prints it. */
async function placementBlock(job: string): Promise<string> {
  const text = await statusText(job);
  const from = text.indexOf('Placement Failure');
  return from < 0 ? '' : text.slice(from, text.indexOf('\n\n', from));
}

describe('03-claims through the Agent: what a real Nomad 2.0.5 agent printed', () => {
  it('step 0: four volumes, each offering what its spec asks', () => {
    expect(Object.keys(ids).sort()).toEqual(['pa[0]', 'pa[1]', 'shared', 'ssw']);
  });

  it.each([
    [1, 'bad-pa-sticky.nomad.hcl'],
    [2, 'bad-mnmw.nomad.hcl'],
    [3, 'bad-reader-rw.nomad.hcl'],
    [4, 'bad-pa-system.nomad.hcl'],
  ])('step %i: refuses %s at register in the servers’ words, and registers nothing', async (step, file) => {
    await expect(run(file)).rejects.toThrow(causeOf(nomad(step).stderr));
    expect(await a.jobs.jobs()).toEqual([]);
  });

  it.each([
    [5, 'missing.nomad.hcl', 'missing'],
    [6, 'ro-default-caps.nomad.hcl', 'ro-default'],
  ])('step %i: %s is not placed: the Placement Failure block, the job pending', async (step, file, job) => {
    const report = await run(file);
    expect(report.placed).toEqual([]);
    expect(report.failures).toEqual([{ group: 'g', count: 1, constraint: 'missing compatible host volumes' }]);
    expect(report.blockedEval).toMatch(/^[0-9a-f-]{36}$/);
    expect(await placementBlock(job)).toBe(placementBlockOf(nomad(step).stdout));
    expect(await statusText(job)).toMatch(/^Status += pending$/m);
  });

  it('step 7: a reader asking single-node-reader-only of a writer-only volume waits; one single writer runs', async () => {
    expect((await run('reader-ok.nomad.hcl')).placed).toEqual([]);
    const writer = await run('writer1.nomad.hcl');
    expect(writer.placed.map((x) => [x.Name, x.ClientStatus])).toEqual([['writer1.g[0]', 'running']]);
    expect(nomad(7).stdout).toBe('reader: still \nwriter1: running\n');
  });

  it('step 9: a second single-node-single-writer job on the same volume is not placed', async () => {
    expect((await run('writer2.nomad.hcl')).placed).toEqual([]);
    expect(await placementBlock('writer2')).toBe(placementBlockOf(nomad(9).stdout));
  });

  it('steps 10-11: per_alloc places g[0] on pa[0] and g[1] on pa[1]; pa[1] cannot be deleted while g[1] runs', async () => {
    const report = await run('per-alloc.nomad.hcl');
    expect(report.placed.map((x) => [x.Name, x.ClientStatus])).toEqual([
      ['per-alloc.g[0]', 'running'],
      ['per-alloc.g[1]', 'running'],
    ]);
    const [g0, g1] = report.placed;
    const nodeId = g0!.NodeID;
    expect((await a.agent.volumeUsers({ Name: 'pa[0]', NodeID: nodeId })).map((x) => x.ID)).toEqual([g0!.ID]);
    expect((await a.agent.volumeUsers({ Name: 'pa[1]', NodeID: nodeId })).map((x) => x.ID)).toEqual([g1!.ID]);
    // Nomad: volume <VOL4> in use by allocations: [<ALLOC1>], the allocation of pa[1].
    expect(causeOf(nomad(11).stderr)).toMatch(/^volume <VOL4> in use by allocations: \[<ALLOC1>\]$/);
    await expect(a.agent.deleteVolume(ids['pa[1]']!, 'default')).rejects.toThrow(
      `volume ${ids['pa[1]']} in use by allocations: [${g1!.ID}]`,
    );
  });

  it('step 12: count 3 with only pa[0] and pa[1]: the third is not placed, the two run on in place', async () => {
    const before = (await a.jobs.allocs()).filter((x) => x.JobID === 'per-alloc').map((x) => x.ID);
    const report = await run('per-alloc-3.nomad.hcl');
    expect(report.placed).toEqual([]);
    expect(report.failures).toEqual([{ group: 'g', count: 1, constraint: 'missing compatible host volumes' }]);
    expect(await placementBlock('per-alloc')).toBe(placementBlockOf(nomad(12).stdout));
    const after = (await a.jobs.allocs()).filter((x) => x.JobID === 'per-alloc');
    expect(after.map((x) => x.ID).sort()).toEqual([...before].sort());
    // A count change is not a destructive update: the allocations keep running, at the job's new version.
    expect(after.map((x) => [x.ClientStatus, x.DesiredStatus, x.JobVersion])).toEqual([
      ['running', 'run', 1],
      ['running', 'run', 1],
    ]);
  });

  it('step 13: raw_exec cannot mount a host volume: the task fails with the client’s events', async () => {
    const [alloc] = (await run('raw.nomad.hcl', { onHost: false })).placed;
    expect(alloc!.ClientStatus).toBe('failed');
    const events = alloc!.TaskStates.t!.Events.map((e) => `${e.Type} | ${e.DisplayMessage}`);
    const nomadEvents = nomad(13)
      .stdout.split('\n')
      .filter((l) => l.includes(' | '));
    // dhv has no deployments, so no health watcher adds `Alloc Unhealthy` (docs/nomad-differences.md).
    expect(events).toEqual(nomadEvents.filter((l) => !l.startsWith('Alloc Unhealthy')));
    const table = (await statusText('raw')).split('\n');
    const header = table.indexOf('Allocations');
    const nomadTable = nomad(13).stdout.split('\n');
    expect(table[header + 1]).toBe(nomadTable[1]);
    const cells = (line: string) => line.split(/\s{2,}/);
    const row = cells(table[header + 2]!);
    expect(row.slice(0, 6)).toEqual([alloc!.ID.slice(0, 8), alloc!.NodeID.slice(0, 8), 'g', '0', 'run', 'failed']);
    expect(cells(nomadTable[2]!).slice(2, 6)).toEqual(row.slice(2, 6));
    expect(row.slice(6)).toEqual([expect.stringMatching(/^\d+s ago$/), expect.stringMatching(/^\d+s ago$/)]);
    expect(allocStatus(alloc!)).toMatch(
      /^Task "t" is "dead"\nRecent Events:\nTime +Type +Description\n.* Not Restarting +Error was unrecoverable\n/m,
    );
  });

  it('steps 14-15: a sticky request writes one claim row: job, group, volume ID and name', async () => {
    const [alloc] = (await run('sticky.nomad.hcl')).placed;
    expect(alloc!.ClientStatus).toBe('running');
    const recorded = JSON.parse(nomad(14).stdout.split('\n')[1]!) as Record<string, string>;
    expect(await a.jobs.stickyClaims('default')).toEqual([
      expect.objectContaining({ ...recorded, VolumeID: recorded.VolumeID!.replace('<VOL1>', ids.shared!) }),
    ]);
    expect((await a.jobs.stickyClaims('default'))[0]).toMatchObject({
      AllocID: alloc!.ID,
      CreateIndex: 1,
      ModifyIndex: 1,
    });
    expect(nomad(15).stdout).toMatch(/^<SHORT> +default +sticky +<VOL1:short> +shared$/m);
  });

  it('step 16: stopping the jobs keeps the sticky claim, and the blocked single writer is placed once the writer stops', async () => {
    const claimBefore = await a.jobs.stickyClaims('default');
    for (const job of ['sticky', 'raw', 'writer1', 'reader', 'per-alloc']) await a.jobs.stop('default', job);
    for (const job of ['sticky', 'writer1', 'per-alloc'])
      expect((await a.jobs.allocs()).filter((x) => x.JobID === job).map((x) => x.ClientStatus)).toEqual(
        job === 'per-alloc' ? ['complete', 'complete'] : ['complete'],
      );
    expect(await a.jobs.stickyClaims('default')).toEqual(claimBefore);
    expect((await a.jobs.allocs()).filter((x) => x.JobID === 'writer2').map((x) => x.ClientStatus)).toEqual([
      'running',
    ]);
    expect(await statusText('sticky')).toMatch(/^Status += dead \(stopped\)$/m);
  });

  it('step 17: purge drops the job, its allocations and its claim', async () => {
    await a.jobs.stop('default', 'sticky', { purge: true });
    expect(await a.jobs.stickyClaims('*')).toEqual([]);
    expect(await a.jobs.job('default', 'sticky')).toBeUndefined();
    expect((await a.jobs.allocs()).filter((x) => x.JobID === 'sticky')).toEqual([]);
    expect(nomad(17).stdout).toBe('No task group host volume claims found\n');
  });

  it('step 18: every volume deletes once its allocations are terminal; ssw is held by the writer placed at step 16', async () => {
    for (const name of ['shared', 'pa[0]', 'pa[1]'])
      expect((await a.agent.deleteVolume(ids[name]!, 'default')).ID).toBe(ids[name]);
    const writer2 = (await a.jobs.allocs()).find((x) => x.JobID === 'writer2')!;
    expect(causeOf(nomad(18).stderr)).toBe('volume <VOL2> in use by allocations: [<ALLOC2>]');
    await expect(a.agent.deleteVolume(ids.ssw!, 'default')).rejects.toThrow(
      `volume ${ids.ssw} in use by allocations: [${writer2.ID}]`,
    );
  });
});
