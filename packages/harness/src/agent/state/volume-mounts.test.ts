import { parseMountinfo } from '@dhv/sdk/host';
import { describe, expect, it } from 'vitest';
import { mountsMadeSince, mountsOf } from './volume-mounts.js';

const ROOT = '22 1 253:0 / / rw,relatime - ext4 /dev/vda rw';

describe("the mounts a volume's plugin made", () => {
  it('counts a mount that took the ID another program freed meanwhile, elsewhere', async () => {
    const before = mountsOf(parseMountinfo(`${ROOT}\n44 22 0:39 / /srv/other rw - tmpfs other rw\n`));
    // The other program unmounted its tmpfs; the plugin's loop mount got its ID, as the kernel hands them out.
    const after = parseMountinfo(`${ROOT}\n44 22 7:3 / /srv/vols/v1 rw - ext4 /dev/loop3 rw\n`);

    const made = await mountsMadeSince(before, after, '/srv/vols/v1');

    expect(made.map((m) => [m.mountId, m.source, m.mountPoint])).toEqual([[44, '/dev/loop3', '/srv/vols/v1']]);
  });

  it('never counts a mount that was at the volume path before the plugin ran', async () => {
    const table = parseMountinfo(`${ROOT}\n45 22 7:4 / /srv/vols/v1 rw - ext4 /dev/loop4 rw\n`);

    expect(await mountsMadeSince(mountsOf(table), table, '/srv/vols/v1')).toEqual([]);
  });
});
