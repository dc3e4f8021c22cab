import { describe, expect, it } from 'vitest';
import { buildHostVolumes } from './host-volumes.js';

describe('the node HostVolumes map', () => {
  it('holds static volumes with an empty ID and dynamic ones with theirs, keyed by name', () => {
    const { hostVolumes, warnings } = buildHostVolumes(
      [{ name: 'cloud-img', path: '/opt/nomad/cloud-img', readOnly: true }],
      [{ id: '1e1d4540-14f9-2515-8502-24d46291717d', name: 'test', path: '/opt/nomad/data/alloc_mounts/1e1d4540-14f9-2515-8502-24d46291717d' }],
    );
    expect(hostVolumes).toEqual({
      'cloud-img': { ID: '', Path: '/opt/nomad/cloud-img', ReadOnly: true },
      test: { ID: '1e1d4540-14f9-2515-8502-24d46291717d', Path: '/opt/nomad/data/alloc_mounts/1e1d4540-14f9-2515-8502-24d46291717d', ReadOnly: false },
    });
    expect(warnings).toEqual([]);
  });

  it('lets a dynamic volume replace a static one of the same name, with a warning', () => {
    const { hostVolumes, warnings } = buildHostVolumes(
      [{ name: 'data', path: '/srv/data', readOnly: false }],
      [{ id: 'a4b60cd7-358b-43ba-8a09-cf09d51ad806', name: 'data', path: '/srv/vols/a4b60cd7' }],
    );
    expect(hostVolumes.data).toEqual({ ID: 'a4b60cd7-358b-43ba-8a09-cf09d51ad806', Path: '/srv/vols/a4b60cd7', ReadOnly: false });
    expect(warnings).toEqual([expect.stringContaining('dynamic host volume "data" (a4b60cd7-358b-43ba-8a09-cf09d51ad806) replaces the static host volume')]);
  });
});
