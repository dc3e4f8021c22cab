import type { HostVolume } from '../agent/volume-view.js';
import { localTimestamp } from './columns.js';
import { short, volumeDetail } from './format-volume.js';

/**
 * What `nomad volume create` prints once the volume is placed and the node reports it:
 * the banner, the ready line, a timestamp and the detail block.
 */
export function volumeCreatedText(volume: HostVolume, verb: 'Created' | 'Updated' | 'Registered'): string {
  const ready = volume.State === 'ready' ? `  ✓ Host volume "${short(volume.ID)}" ready` : `  ! Host volume "${short(volume.ID)}" ${volume.State}`;
  return [
    `==> ${verb} host volume ${volume.Name} with ID ${volume.ID}`,
    ready,
    '',
    `    ${localTimestamp()}`,
    volumeDetail(volume, '    '),
  ].join('\n');
}
