import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { jobOf, taskOf } from '../../../../../test/support/job-fixtures.js';
import { defaultVolumeRequest, type TaskGroup } from '../../jobs/job-spec.js';
import { MISSING_HOST_VOLUMES, infeasibility, type ServerHostVolume } from '../../jobs/host-volume-checker.js';
import type { AllocRecord, ClientStatus, JobRecord, StickyClaim } from '../state/job-records.js';
import { newAllocation, nodeViewOf } from './placement.js';

/** What the scheduler reads of the node (jobs-and-claims.md §2.2), and the allocation it writes. */

const tg: TaskGroup = {
  Name: 'web',
  Count: 1,
  Volumes: { data: { ...defaultVolumeRequest('data'), Type: 'host', Source: 'data', Sticky: true } },
  Tasks: [taskOf({ Name: 'server' }), taskOf({ Name: 'sidecar', Config: {}, Resources: { CPU: 1, MemoryMB: 1 } })],
  Update: null,
};
const job = jobOf([tg], { ID: 'app', Name: 'app', Version: 3 });

const volume = (ID: string, Name: string, Namespace = 'default'): ServerHostVolume => ({
  ID,
  Name,
  Namespace,
  State: 'ready',
  RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }],
});

function alloc(ID: string, ClientStatus: ClientStatus, over: Partial<AllocRecord> = {}): AllocRecord {
  return { ...newAllocation(job, tg, 'app.web[0]', 'eval', 'node'), ID, ClientStatus, ...over };
}

const claim = (AllocID: string, VolumeID: string, Namespace = 'default'): StickyClaim => ({
  ID: `claim-${VolumeID}`,
  Namespace,
  JobID: 'app',
  TaskGroupName: 'web',
  AllocID,
  VolumeID,
  VolumeName: 'data',
  CreateIndex: 1,
  ModifyIndex: 1,
});

const record = (claims: StickyClaim[]): JobRecord => ({
  Job: job,
  FailedTGAllocs: {},
  BlockedEval: '',
  StickyClaims: claims,
});

/** The node as it is after the claiming allocation `old` failed: `data` is now vol-b; vol-a still exists as `old-data`. */
function viewAfterFailure(
  claims: StickyClaim[],
  allocs: AllocRecord[],
  volumes = [volume('vol-a', 'old-data'), volume('vol-b', 'data')],
) {
  return nodeViewOf(
    {
      hostVolumes: new Map([['data', { Name: 'data', ID: 'vol-b', Path: '/v/b', ReadOnly: false }]]),
      volumes,
      allocs,
      jobs: [record(claims)],
    },
    job,
  );
}

describe("the scheduler's unmet sticky claims", () => {
  it('a claim whose allocation is terminal and unreplaced is unmet: the sticky request may only go back to its volume', () => {
    const view = viewAfterFailure([claim('old', 'vol-a')], [alloc('old', 'failed')]);
    expect([...view.unmetClaims!]).toEqual(['vol-a']);
    expect(infeasibility(job, tg, 'app.web[0]', view)).toBe(MISSING_HOST_VOLUMES);
  });

  it('a claim is dropped silently once its allocation is garbage collected, or its volume deleted or in another namespace', () => {
    const gcd = viewAfterFailure([claim('old', 'vol-a')], []);
    const deleted = viewAfterFailure([claim('old', 'vol-a')], [alloc('old', 'failed')], [volume('vol-b', 'data')]);
    const elsewhere = viewAfterFailure(
      [claim('old', 'vol-a')],
      [alloc('old', 'failed')],
      [volume('vol-a', 'old-data', 'prod'), volume('vol-b', 'data')],
    );
    for (const view of [gcd, deleted, elsewhere]) {
      expect([...view.unmetClaims!]).toEqual([]);
      expect(infeasibility(job, tg, 'app.web[0]', view)).toBeUndefined();
    }
  });

  it('a live allocation of the same job and group meets the claim; terminal ones are not proposed', () => {
    const view = viewAfterFailure([claim('old', 'vol-a')], [alloc('old', 'complete'), alloc('new', 'running')]);
    expect([...view.unmetClaims!]).toEqual([]);
    expect((view.proposed as AllocRecord[]).map((a) => a.ID)).toEqual(['new']);
    const otherGroup = viewAfterFailure(
      [claim('old', 'vol-a')],
      [alloc('old', 'lost'), alloc('x', 'pending', { TaskGroup: 'db' })],
    );
    expect([...otherGroup.unmetClaims!]).toEqual(['vol-a']);
  });

  it('reads the current version of a job by namespace and ID; without a job to place, no claim is unmet', () => {
    const view = nodeViewOf({
      hostVolumes: new Map(),
      volumes: [],
      allocs: [alloc('old', 'failed')],
      jobs: [record([claim('old', 'vol-a')])],
    });
    expect(view.jobOf('default', 'app')).toBe(job);
    expect(view.jobOf('prod', 'app')).toBeUndefined();
    expect(view.unmetClaims!.size).toBe(0);
  });
});

describe('a new allocation, as the servers write it', () => {
  it('is desired to run and pending, each task pending with the Received event, at the job’s version on this node', () => {
    const a = newAllocation(job, tg, 'app.web[0]', 'eval-1', 'node-1');
    expect(a).toMatchObject({
      ID: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
      EvalID: 'eval-1',
      Name: 'app.web[0]',
      Namespace: 'default',
      NodeID: 'node-1',
      NodeName: hostname(),
      JobID: 'app',
      JobType: 'service',
      JobVersion: 3,
      TaskGroup: 'web',
      DesiredStatus: 'run',
      DesiredDescription: '',
      ClientStatus: 'pending',
      ClientDescription: 'No tasks have started',
    });
    expect(Object.keys(a.TaskStates)).toEqual(['server', 'sidecar']);
    expect(a.TaskStates.server).toEqual({
      State: 'pending',
      Failed: false,
      StartedAt: null,
      FinishedAt: null,
      Events: [
        expect.objectContaining({ Type: 'Received', DisplayMessage: 'Task received by client', FailsTask: false }),
      ],
    });
    expect(a.CreateTime).toBe(a.ModifyTime);
    expect(Math.abs(a.CreateTime / 1e6 - Date.now())).toBeLessThan(60_000);
  });
});
