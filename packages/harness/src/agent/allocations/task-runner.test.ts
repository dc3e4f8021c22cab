import { afterEach, describe, expect, it, vi } from 'vitest';
import { taskOf } from '../../../../../test/support/job-fixtures.js';
import { defaultVolumeRequest, type Job, type Task, type TaskGroup } from '../../jobs/job-spec.js';
import { prestart, type TaskStartRequest } from './task-runner.js';
import { EXEC_DEFAULT_CAPS, execTaskCaps } from './task-launch.js';

const task = (over: Partial<Task> = {}): Task =>
  taskOf({
    Driver: 'exec',
    VolumeMounts: [
      { Volume: 'data', Destination: '/srv/data', ReadOnly: false, PropagationMode: 'private', SELinuxLabel: '' },
    ],
    ...over,
  });

function request(t: Task, { perAlloc = false, readOnly = false, volumes = ['data'] } = {}): TaskStartRequest {
  const group: TaskGroup = {
    Name: 'g',
    Count: 1,
    Volumes: {
      data: { ...defaultVolumeRequest('data'), Type: 'host', Source: 'data', PerAlloc: perAlloc, ReadOnly: readOnly },
    },
    Tasks: [t],
    Update: null,
  };
  const job = { ID: 'j', Name: 'j', Namespace: 'default', Type: 'service', TaskGroups: [group] } as Job;
  return {
    job,
    group,
    task: t,
    allocId: 'a',
    allocName: 'j.g[1]',
    allocIndex: 1,
    hostVolumes: new Map(volumes.map((n) => [n, { Name: n, Path: `/v/${n}`, ReadOnly: false, ID: `id-${n}` }])),
  };
}

const asUid = (uid: number) => vi.spyOn(process as { getuid: () => number }, 'getuid').mockReturnValue(uid);
afterEach(() => vi.restoreAllMocks());

describe("the client's prestart, in Nomad's task event words", () => {
  it('mounts the volume, read-only when the group asks', () => {
    asUid(0);
    expect(prestart(request(task(), { readOnly: true }))).toEqual([
      { hostPath: '/v/data', destination: '/srv/data', readOnly: true },
    ]);
  });

  it('fails a per_alloc volume the node does not have (the validation error lists it)', () => {
    asUid(0);
    expect(prestart(request(task(), { perAlloc: true }))).toEqual({
      type: 'Task hook failed',
      message: 'volumes: host volume validation error: 1 error occurred:\n\t* missing data[1]\n\n',
    });
  });

  it('refuses a mount under raw_exec', () => {
    asUid(0);
    expect(prestart(request(task({ Driver: 'raw_exec' })))).toEqual({
      type: 'Task hook failed',
      message: 'volumes: task driver "raw_exec" for "t" does not support host volumes',
    });
  });

  it('refuses root under exec, as the driver does by default', () => {
    asUid(0);
    expect(prestart(request(task({ User: 'root' })))).toEqual({
      type: 'Task hook failed',
      message: 'validate: running as user "root" is disallowed',
    });
  });

  it('without root, fails a task that mounts a volume and says why; a task without a mount still starts', () => {
    asUid(1000);
    const refused = prestart(request(task()));
    expect(refused).toMatchObject({ type: 'Task hook failed' });
    expect((refused as { message: string }).message).toMatch(
      /^volumes: dhv runs as uid 1000, not root: mounting a host volume into a task needs root/,
    );
    expect(prestart(request(task({ VolumeMounts: [] })))).toEqual([]);
  });
});

describe("the exec driver's capabilities", () => {
  it('are the thirteen defaults on a default client, and those allow_caps allows on a hardened one', () => {
    expect(execTaskCaps(undefined)).toEqual([...EXEC_DEFAULT_CAPS]);
    expect(execTaskCaps(EXEC_DEFAULT_CAPS.filter((c) => c !== 'dac_override'))).not.toContain('dac_override');
    // Nomad's names are accepted with or without cap_, in any case; a capability beyond the defaults is never given.
    expect(execTaskCaps(['CAP_CHOWN', 'kill', 'sys_admin'])).toEqual(['chown', 'kill']);
  });
});
