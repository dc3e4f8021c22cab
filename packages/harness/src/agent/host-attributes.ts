import { readFileSync } from 'node:fs';
import { arch, cpus, hostname, platform, release, totalmem, type } from 'node:os';

/** The Nomad version the simulated agent says it is (`nomad.version`): the first with dynamic host volumes' plugin API as dhv speaks it. */
export const SIMULATED_NOMAD_VERSION = '1.10.0';

/** Node's `os.arch()` in Go's GOARCH spelling, which Nomad publishes as `cpu.arch`. */
const GOARCH: Record<string, string> = {
  x64: 'amd64',
  ia32: '386',
  arm64: 'arm64',
  arm: 'arm',
  ppc64: 'ppc64le',
  s390x: 's390x',
  riscv64: 'riscv64',
  loong64: 'loong64',
  mips: 'mips',
  mipsel: 'mipsle',
};

/**
 * The attributes a Nomad agent fingerprints from the host that volume specs constrain
 * on, read cheaply from the running system: `kernel.name`, `kernel.version`,
 * `kernel.arch`, `os.name`, `os.version`, `cpu.arch`, `cpu.numcores`, `cpu.modelname`,
 * `memory.totalbytes`, `unique.hostname`, `unique.host_id` (from /etc/machine-id), `nomad.version`. A fact the host does not give
 * is left out, as Nomad leaves out what its fingerprinter cannot find.
 */
export function hostAttributes(read: (path: string) => string | undefined = readText): Record<string, string> {
  const attributes: Record<string, string> = {
    'kernel.name': platform(),
    'kernel.version': release(),
    'kernel.arch': kernelArch(),
    'cpu.arch': GOARCH[arch()] ?? arch(),
    'cpu.numcores': String(cpus().length),
    'memory.totalbytes': String(totalmem()),
    'unique.hostname': hostname(),
    'nomad.version': SIMULATED_NOMAD_VERSION,
  };
  const model = cpus()[0]?.model.trim();
  if (model) attributes['cpu.modelname'] = model;
  const osRelease = parseOsRelease(read('/etc/os-release') ?? '');
  if (osRelease.ID) attributes['os.name'] = osRelease.ID;
  if (osRelease.VERSION_ID) attributes['os.version'] = osRelease.VERSION_ID;
  const machineId = (read('/etc/machine-id') ?? '').trim();
  if (/^[0-9a-f]{32}$/.test(machineId))
    attributes['unique.host_id'] = machineId.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
  return Object.fromEntries(Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** `uname -m`, which Nomad publishes as `kernel.arch`: x86_64, aarch64, ... */
function kernelArch(): string {
  const machine: Record<string, string> = { x64: 'x86_64', arm64: 'aarch64', ia32: 'i686' };
  return machine[arch()] ?? `${type().toLowerCase()}-${arch()}`;
}

/** `/etc/os-release` as `KEY=value` lines, values unquoted. */
export function parseOsRelease(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!.replace(/^(["'])(.*)\1$/, '$2');
  }
  return out;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
