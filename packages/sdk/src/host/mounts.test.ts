import { describe, expect, it } from 'vitest';
import { PluginFailure } from '../helpers/errors.js';
import { mountsAt } from './mount-table.js';
import { lastingMountsInOtherNamespaces, mountsElsewhere, VolumeBusyError } from './mounts.js';

/** The questions a delete asks before it unmounts, answered from this machine's own mount tables (nothing is mounted here). */

describe('mounts of a volume elsewhere', () => {
  it("are the other mounts of its device in this namespace, never the one at the volume's own place", async () => {
    const proc = (await mountsAt('/proc')).at(-1)!;
    const devices = new Set([proc.device]);
    expect((await mountsElsewhere(devices, '/proc')).map((m) => m.mountPoint)).not.toContain('/proc');
    expect((await mountsElsewhere(devices, '/srv/not-here')).map((m) => m.mountId)).toContain(proc.mountId);
    expect(await mountsElsewhere(new Set(['0:0']), '/proc')).toEqual([]);
  });

  it('are none in any other mount namespace for a device nobody mounted', async () => {
    expect(await lastingMountsInOtherNamespaces(new Set(['0:0']))).toEqual([]);
  });
});

describe('a volume in use', () => {
  it('cannot be unmounted, says who to stop, and is a plugin failure with its own code and path', () => {
    const err = new VolumeBusyError('/srv/vols/v1');
    expect(err).toBeInstanceOf(PluginFailure);
    expect(err.name).toBe('VolumeBusyError');
    expect(err.message).toBe(
      'the volume at /srv/vols/v1 is in use (a process has files open or its working directory there), so it cannot be unmounted; stop the workloads using it and try again',
    );
    expect([err.code, err.path, err.details]).toEqual(['EVOLUMEBUSY', '/srv/vols/v1', { path: '/srv/vols/v1' }]);
  });
});
