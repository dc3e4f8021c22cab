import type { HostVolume } from '../agent/volume-view.js';
import { localTimestamp } from './columns.js';
import { printable, short, volumeDetail } from './format-volume.js';

export interface CreateOutput {
  /** `-detach`: one line, no monitor. */
  detach: boolean;
  /** `-verbose`: full IDs and names in the monitor, and the full detail block. */
  verbose: boolean;
  /** stdout is a terminal: the live view's last frame instead of the `==>` log lines. */
  tty: boolean;
  now?: Date;
}

/**
 * What `nomad volume create` prints (PROTOCOL.md, "What the CLI prints"). The servers'
 * reply carries the volume `pending` (the node has not reported it yet), so without
 * `-detach` the CLI prints the banner and monitors the volume until the node reports it:
 * on a terminal the live view ends on `✓ Host volume "<id>" ready`, a timestamp and the
 * short detail block; without one, two `==> <time>:` lines. The simulated node reports a
 * volume as soon as create returns, so the monitor ends at once.
 */
export function volumeCreatedText(
  volume: HostVolume,
  { detach, verbose, tty, now = new Date() }: CreateOutput,
): string {
  const name = printable(volume.Name);
  if (detach) return `Created host volume ${name} with ID ${volume.ID}`;
  const cut = (value: string) => (verbose ? value : short(value));
  const banner = `==> Created host volume ${name} with ID ${volume.ID}`;
  const time = localTimestamp(now);
  if (!tty) {
    const lines = [banner, `==> ${time}: Monitoring volume "${cut(volume.ID)}"...`];
    // Nomad's CLI keeps waiting for any other state; the simulated node's answer is final, so it is said.
    lines.push(
      volume.State === 'ready'
        ? `==> ${time}: Volume "${printable(cut(volume.Name))}" ready`
        : `==> ${time}: Volume "${printable(cut(volume.Name))}" ${volume.State}`,
    );
    return lines.join('\n');
  }
  const mark = volume.State === 'ready' ? '✓' : '!';
  return [
    banner,
    `  ${mark} Host volume "${cut(volume.ID)}" ${volume.State}`,
    '',
    `    ${time}`,
    volumeDetail(volume, { short: !verbose, indent: '    ' }),
    '',
  ].join('\n');
}

/** What `nomad volume register` prints: one line. */
export function volumeRegisteredText(volume: HostVolume): string {
  return `Registered host volume ${printable(volume.Name)} with ID ${volume.ID}`;
}
