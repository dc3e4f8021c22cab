import { hostname, platform } from 'node:os';
import { describe, expect, it } from 'vitest';
import { hostAttributes, parseOsRelease, SIMULATED_NOMAD_VERSION } from './host-attributes.js';

describe("the host's attributes, as a Nomad agent fingerprints them", () => {
  it('gives kernel, OS, CPU, memory, host name and Nomad version from the running host', () => {
    const attributes = hostAttributes(() => 'ID=debian\nVERSION_ID="12"\nPRETTY_NAME="Debian GNU/Linux 12"\n');
    expect(attributes).toMatchObject({
      'kernel.name': platform(),
      'os.name': 'debian',
      'os.version': '12',
      'unique.hostname': hostname(),
      'nomad.version': SIMULATED_NOMAD_VERSION,
    });
    expect(attributes['cpu.arch']).toMatch(/^(amd64|arm64|386|arm|ppc64le|s390x|riscv64)$/);
    expect(Number(attributes['cpu.numcores'])).toBeGreaterThan(0);
    expect(Number(attributes['memory.totalbytes'])).toBeGreaterThan(0);
    expect(attributes['kernel.version']).toMatch(/^\d+\.\d+/);
  });

  it('leaves out what the host does not say', () => {
    const attributes = hostAttributes(() => undefined);
    expect(attributes['os.name']).toBeUndefined();
    expect(attributes['kernel.name']).toBe(platform());
  });

  it('reads /etc/os-release values quoted or not', () => {
    expect(parseOsRelease(`ID=ubuntu\nVERSION_ID="24.04"\n# comment\nNAME='Ubuntu'\n`)).toEqual({
      ID: 'ubuntu',
      VERSION_ID: '24.04',
      NAME: 'Ubuntu',
    });
  });
});
