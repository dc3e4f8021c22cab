import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTempDir, tempDir } from '../../../../../test/support/kit.js';
import { defaultVolumeRequest, type Job, type TaskGroup } from '../../jobs/job-spec.js';
import type { NodeView } from '../../jobs/host-volume-checker.js';
import { AgentStore } from '../state/store.js';
import type { AllocRecord, ClientStatus, JobRecords } from '../state/job-records.js';
import { claimStickyVolumes, deleteStickyClaim, stickyClaims } from './sticky-claims.js';
import { newAllocation } from './placement.js';

/** Nomad's TaskGroupHostVolumeClaim rules (jobs-and-claims.md §3.2), case by case on the job's records. */

let dir: string;
let records: JobRecords;
beforeEach(async () => {
  dir = await tempDir('sticky-claims');
  records = new AgentStore(dir).jobs;
});
afterEach(() => removeTempDir(dir));

function group(volumes: Record<string, Partial<TaskGroup['Volumes'][string]>>): TaskGroup {
  return {
    Name: 'web',
    Count: 1,
    Volumes: Object.fromEntries(
      Object.entries(volumes).map(([alias, v]) => [alias, { ...defaultVolumeRequest(alias), Type: 'host', ...v }]),
    ),
    Tasks: [],
    Update: null,
  };
}

function jobWith(tg: TaskGroup, namespace = 'default'): Job {
  return {
    ID: 'app',
    Name: 'app',
    Namespace: namespace,
    Type: 'service',
    TaskGroups: [tg],
    Version: 0,
    Stop: false,
    SubmitTime: 0,
  };
}

/** The node's HostVolumes: `data` is the dynamic volume vol-a, `static` a static one. */
const node: NodeView = {
  hostVolumes: new Map([
    ['data', { ID: 'vol-a', Path: '/v/a', ReadOnly: false }],
    ['static', { ID: '', Path: '/srv/static', ReadOnly: false }],
  ]),
  volumes: new Map(),
  proposed: [],
  jobOf: () => undefined,
};

async function placed(job: Job, tg: TaskGroup, status: ClientStatus = 'running'): Promise<AllocRecord> {
  const alloc = { ...newAllocation(job, tg, 'app.web[0]', 'eval', 'node'), ClientStatus: status };
  await records.putAlloc(alloc);
  await claimStickyVolumes(records, job, tg, alloc, node);
  return alloc;
}

describe('sticky claims written at placement', () => {
  it('writes one row per sticky request: the node’s volume ID under the request’s source, for the new allocation', async () => {
    const tg = group({ data: { Source: 'data', Sticky: true }, other: { Source: 'data' } });
    const job = jobWith(tg);
    await records.putJob({ Job: job, FailedTGAllocs: {}, BlockedEval: '' });
    const alloc = await placed(job, tg);
    expect(await stickyClaims(records, 'default')).toEqual([
      {
        ID: expect.stringMatching(/^[0-9a-f-]{36}$/),
        Namespace: 'default',
        JobID: 'app',
        TaskGroupName: 'web',
        AllocID: alloc.ID,
        VolumeID: 'vol-a',
        VolumeName: 'data',
        CreateIndex: 1,
        ModifyIndex: 1,
      },
    ]);
  });

  it('writes nothing without a sticky request, for a job no longer registered, or for a static volume (it has no ID)', async () => {
    const plain = group({ data: { Source: 'data' } });
    await records.putJob({ Job: jobWith(plain), FailedTGAllocs: {}, BlockedEval: '' });
    await placed(jobWith(plain), plain);
    const sticky = group({ data: { Source: 'data', Sticky: true } });
    await placed(jobWith(sticky, 'gone'), sticky);
    const onStatic = group({ s: { Source: 'static', Sticky: true } });
    await placed(jobWith(onStatic), onStatic);
    expect(await stickyClaims(records, '*')).toEqual([]);
    expect((await records.job('default', 'app'))?.StickyClaims).toEqual([]);
  });

  it('a replacement for a terminal allocation takes the row over with its ID; CreateIndex stays, ModifyIndex moves', async () => {
    const tg = group({ data: { Source: 'data', Sticky: true } });
    const job = jobWith(tg);
    await records.putJob({ Job: job, FailedTGAllocs: {}, BlockedEval: '' });
    await placed(job, tg, 'failed');
    const [first] = await stickyClaims(records, 'default');
    const replacement = await placed(job, tg);
    expect(await stickyClaims(records, 'default')).toEqual([
      { ...first, AllocID: replacement.ID, CreateIndex: 1, ModifyIndex: 2 },
    ]);
  });

  it('an allocation the servers stopped counts as terminal too (TerminalStatus: desired stop)', async () => {
    const tg = group({ data: { Source: 'data', Sticky: true } });
    const job = jobWith(tg);
    await records.putJob({ Job: job, FailedTGAllocs: {}, BlockedEval: '' });
    const old = await placed(job, tg);
    await records.putAlloc({ ...old, DesiredStatus: 'stop' });
    const [first] = await stickyClaims(records, 'default');
    await placed(job, tg);
    expect((await stickyClaims(records, 'default')).map((c) => c.ID)).toEqual([first!.ID]);
  });

  it('an allocation stopped by the same update is still live to Nomad (its plan writes the new one first): a new ID', async () => {
    const tg = group({ data: { Source: 'data', Sticky: true } });
    const job = jobWith(tg);
    await records.putJob({ Job: job, FailedTGAllocs: {}, BlockedEval: '' });
    const old = await placed(job, tg);
    await records.putAlloc({ ...old, DesiredStatus: 'stop', ClientStatus: 'complete' });
    const [first] = await stickyClaims(records, 'default');
    const replacement = { ...newAllocation(job, tg, 'app.web[0]', 'eval', 'node') };
    await records.putAlloc(replacement);
    await claimStickyVolumes(records, job, tg, replacement, node, new Set([old.ID]));
    const [claim] = await stickyClaims(records, 'default');
    expect(claim).toMatchObject({ AllocID: replacement.ID, CreateIndex: 1, ModifyIndex: 2 });
    expect(claim!.ID).not.toBe(first!.ID);
  });

  it('while the claiming allocation still lives, or once it is garbage collected, the row gets a new ID', async () => {
    const tg = group({ data: { Source: 'data', Sticky: true } });
    const job = jobWith(tg);
    await records.putJob({ Job: job, FailedTGAllocs: {}, BlockedEval: '' });
    await placed(job, tg);
    const [first] = await stickyClaims(records, 'default');
    const second = await placed(job, tg);
    const [live] = await stickyClaims(records, 'default');
    expect(live).toMatchObject({ AllocID: second.ID, CreateIndex: 1, ModifyIndex: 2 });
    expect(live!.ID).not.toBe(first!.ID);
    await records.removeAlloc(second.ID);
    await placed(job, tg);
    const [afterGc] = await stickyClaims(records, 'default');
    expect(afterGc).toMatchObject({ CreateIndex: 1, ModifyIndex: 3 });
    expect([first!.ID, live!.ID]).not.toContain(afterGc!.ID);
  });
});

describe('volume claim list and delete', () => {
  async function twoNamespaces(): Promise<void> {
    for (const ns of ['default', 'prod']) {
      const tg = group({ data: { Source: 'data', Sticky: true } });
      await records.putJob({ Job: jobWith(tg, ns), FailedTGAllocs: {}, BlockedEval: '' });
      await placed(jobWith(tg, ns), tg);
    }
  }

  it('lists a namespace’s claims, or every namespace’s with *, ordered by claim ID', async () => {
    await twoNamespaces();
    expect((await stickyClaims(records, 'prod')).map((c) => c.Namespace)).toEqual(['prod']);
    const all = await stickyClaims(records, '*');
    expect(all.map((c) => c.ID)).toEqual(all.map((c) => c.ID).sort());
    expect(all).toHaveLength(2);
  });

  it('deletes a claim only from its own namespace; elsewhere, or unknown, Nomad’s words', async () => {
    await twoNamespaces();
    const [prod] = await stickyClaims(records, 'prod');
    // Nomad 2.0.4's fix (GH-28205): a claim is deleted only in the request's namespace.
    await expect(deleteStickyClaim(records, 'default', prod!.ID)).rejects.toThrow(
      /^task group volume claim does not exist$/,
    );
    await expect(deleteStickyClaim(records, 'prod', 'no-such-claim')).rejects.toMatchObject({
      code: 'SPEC_INVALID',
      message: 'task group volume claim does not exist',
    });
    await deleteStickyClaim(records, 'prod', prod!.ID);
    expect((await stickyClaims(records, '*')).map((c) => c.Namespace)).toEqual(['default']);
    // The job itself stays registered.
    expect(await records.job('prod', 'app')).toMatchObject({ StickyClaims: [] });
  });
});
