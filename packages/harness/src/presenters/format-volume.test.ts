import { describe, expect, it } from 'vitest';
import type { HostVolume } from '../agent/volume-view.js';
import { ambiguousPrefixText, colorOn, volumeWarningsText } from './format-volume.js';

const volume = (ID: string, Name: string) =>
  ({
    ID,
    Name,
    Namespace: 'default',
    PluginID: 'mkdir',
    NodeID: 'abcdef12-0000',
    NodePool: 'default',
    State: 'ready',
  }) as HostVolume;

describe("Nomad's words for volumes", () => {
  it('an ambiguous prefix: the line, a blank line and the table, sorted by ID ("host volumes" for status)', () => {
    const both = [volume('1e1d4541-aaaa', 'database'), volume('1e1d4540-bbbb', 'data')];
    expect(ambiguousPrefixText(both, { command: 'status' })).toBe(
      [
        'Prefix matched multiple host volumes',
        '',
        'ID        Name      Namespace  Plugin ID  Node ID   Node Pool  State',
        '1e1d4540  data      default    mkdir      abcdef12  default    ready',
        '1e1d4541  database  default    mkdir      abcdef12  default    ready',
      ].join('\n'),
    );
    expect(ambiguousPrefixText(both, { command: 'delete' })).toMatch(/^Prefix matched multiple volumes\n\n/);
  });

  it('Volume Warnings: a block then a blank line, bold yellow only on a terminal without NO_COLOR', () => {
    expect(volumeWarningsText([])).toBe('');
    expect(volumeWarningsText(['a', 'b\nc'])).toBe('Volume Warnings:\na\nb\\nc\n\n');
    expect(volumeWarningsText(['a'], { color: true })).toBe('\x1b[1m\x1b[33mVolume Warnings:\na\x1b[0m\n\n');
    expect(colorOn({ isTTY: true }, {})).toBe(true);
    expect(colorOn({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colorOn({ isTTY: false }, {})).toBe(false);
  });
});
