import { describe, expect, it } from 'vitest';
import { applyHostVolumeUpdates, hostVolumesObject, staticHostVolumes } from './host-volumes.js';

const dynamic = (name: string, id: string, path: string) => ({
  name,
  volume: { Name: name, Path: path, ReadOnly: false, ID: id },
});

describe('the node HostVolumes map', () => {
  it('holds static volumes with an empty ID and dynamic ones with theirs, keyed by name', () => {
    const { hostVolumes, warnings } = applyHostVolumeUpdates(
      staticHostVolumes([{ name: 'cloud-img', path: '/opt/nomad/cloud-img', readOnly: true }]),
      [dynamic('test', '1e1d4540-14f9-2515-8502-24d46291717d', '/opt/nomad/data/alloc_mounts/1e1d4540')],
    );
    expect(hostVolumesObject(hostVolumes)).toEqual({
      'cloud-img': { Name: 'cloud-img', ID: '', Path: '/opt/nomad/cloud-img', ReadOnly: true },
      test: {
        Name: 'test',
        ID: '1e1d4540-14f9-2515-8502-24d46291717d',
        Path: '/opt/nomad/data/alloc_mounts/1e1d4540',
        ReadOnly: false,
      },
    });
    expect(warnings).toEqual([]);
  });

  it("lets a dynamic volume replace a static one of the same name, read-only flag included, with Nomad's warning first", () => {
    const { hostVolumes, warnings } = applyHostVolumeUpdates(
      staticHostVolumes([{ name: 'data', path: '/srv/data', readOnly: true }]),
      [dynamic('data', 'a4b60cd7-358b-43ba-8a09-cf09d51ad806', '/srv/vols/a4b60cd7')],
    );
    expect(hostVolumes.get('data')).toEqual({
      Name: 'data',
      ID: 'a4b60cd7-358b-43ba-8a09-cf09d51ad806',
      Path: '/srv/vols/a4b60cd7',
      ReadOnly: false,
    });
    expect(warnings).toEqual([
      expect.stringMatching(
        /^overriding static host volume with dynamic: name=data id=a4b60cd7-358b-43ba-8a09-cf09d51ad806\n/,
      ),
    ]);
  });

  it('drops the name on a removal, static volume included, until the map is rebuilt at the next start', () => {
    const start = staticHostVolumes([{ name: 'data', path: '/srv/data', readOnly: true }]);
    const shadowed = applyHostVolumeUpdates(start, [
      dynamic('data', 'a4b60cd7-358b-43ba-8a09-cf09d51ad806', '/srv/vols/a4b60cd7'),
    ]).hostVolumes;
    expect(applyHostVolumeUpdates(shadowed, [{ name: 'data', volume: null }]).hostVolumes.size).toBe(0);
    expect(staticHostVolumes([{ name: 'data', path: '/srv/data', readOnly: true }]).get('data')?.ID).toBe('');
  });

  it('applies updates in order: the last one for a name wins', () => {
    const { hostVolumes } = applyHostVolumeUpdates(new Map(), [
      { name: 'x', volume: null },
      dynamic('x', 'b', '/b'),
      { name: 'y', volume: null },
    ]);
    expect(hostVolumesObject(hostVolumes)).toEqual({ x: { Name: 'x', ID: 'b', Path: '/b', ReadOnly: false } });
  });

  it('is shown as Nomad shows it: an object whose names are in order, whatever order they were added in', () => {
    const { hostVolumes } = applyHostVolumeUpdates(new Map(), [dynamic('b', '2', '/b'), dynamic('a', '1', '/a')]);
    expect(Object.keys(hostVolumesObject(hostVolumes))).toEqual(['a', 'b']);
  });
});
