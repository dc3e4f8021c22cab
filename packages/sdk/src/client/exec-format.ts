import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { arch } from 'node:os';

/**
 * What execve(2) would make of a file, decided before spawning: libuv's spawn (through
 * execvp) runs a file the kernel refused with ENOEXEC through /bin/sh, so a plugin that
 * works here would fail under a real agent, which uses execve. Nothing here blocks:
 * a FIFO, socket or device is judged from its type, never opened.
 */
export type ExecKind =
  { kind: 'script' } | { kind: 'elf' } | { kind: 'refused'; errno: 'ENOEXEC' | 'EACCES'; why: string; fix?: string };

/** Linux's O_PATH: an fd that names a file without opening it (no FIFO wait, no device open). */
export const O_PATH = 0o10000000;

export function describeFileType(info: Stats): string | undefined {
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice()) return 'a character device (a terminal or the like)';
  if (info.isBlockDevice()) return 'a block device';
  if (info.isDirectory()) return 'a directory';
  return undefined;
}

/** `fd` names the file (O_PATH is enough); its first bytes are read through /proc only when it is a regular file. */
export function execKind(fd: number, info: Stats = fstatSync(fd)): ExecKind {
  if (!info.isFile()) {
    return {
      kind: 'refused',
      errno: 'EACCES',
      why: `it is ${describeFileType(info) ?? 'not a regular file'}, not a program: execve refuses it`,
    };
  }
  const head = Buffer.alloc(64);
  let length: number;
  try {
    const readable = openSync(`/proc/self/fd/${fd}`, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    try {
      length = readSync(readable, head, 0, head.length, 0);
    } finally {
      closeSync(readable);
    }
  } catch {
    // Unreadable (execute-only, or no /proc): let execve judge it.
    return { kind: 'script' };
  }
  const b = head.subarray(0, length);
  if (b[0] === 0x23 && b[1] === 0x21) return { kind: 'script' };
  if (b[0] === 0x7f && b[1] === 0x45 && b[2] === 0x4c && b[3] === 0x46) {
    const machine = otherMachine(b);
    if (machine) return { kind: 'refused', errno: 'ENOEXEC', ...machine };
    const problem = elfProblem(b);
    return problem
      ? { kind: 'refused', errno: 'ENOEXEC', why: `it begins like an ELF program but ${problem}` }
      : { kind: 'elf' };
  }
  return {
    kind: 'refused',
    errno: 'ENOEXEC',
    why:
      length === 0
        ? 'it is empty'
        : 'it is neither a program nor a script: a script must begin with a #! line (for example #!/bin/sh)',
  };
}

/** How a person calls each `e_machine`. */
const MACHINE_NAMES: Record<number, string> = {
  62: 'x86-64 (amd64)',
  3: 'x86 (i386)',
  183: 'arm64 (aarch64)',
  40: '32-bit arm',
  21: 'ppc64',
  22: 's390x',
  243: 'riscv64',
};

/** Go's name for this host's architecture, as GOARCH spells it. */
const goArch = () => ({ x64: 'amd64', ia32: '386' })[arch() as 'x64' | 'ia32'] ?? arch();

/** A sound ELF header built for a machine this host cannot run: what it is for, and the fix. */
function otherMachine(b: Buffer): { why: string; fix: string } | undefined {
  if (b.length < 20 || (b[5] !== 1 && b[5] !== 2)) return undefined;
  const machine = b[5] === 1 ? b.readUInt16LE(18) : b.readUInt16BE(18);
  const accepted = MACHINES[arch()];
  if (!accepted || accepted.includes(machine)) return undefined;
  return {
    why: `it is built for ${MACHINE_NAMES[machine] ?? `another machine (ELF e_machine ${machine})`}, and this host is ${MACHINE_NAMES[accepted[0]!] ?? arch()}`,
    fix: `build it for linux/${goArch()} (e.g. GOARCH=${goArch()} go build)`,
  };
}

const MACHINES: Record<string, number[]> = {
  x64: [62, 3],
  arm64: [183, 40],
  arm: [40],
  ia32: [3],
  ppc64: [21],
  s390x: [22],
  riscv64: [243],
};

/** The header checks the kernel's ELF loader makes before anything else; undefined when they pass. */
function elfProblem(b: Buffer): string | undefined {
  if (b.length < 52) return 'its header is cut short';
  const cls = b[4];
  const data = b[5];
  if (cls !== 1 && cls !== 2) return `its class byte is ${cls} (1 or 2 expected)`;
  if (data !== 1 && data !== 2) return `its byte-order byte is ${data} (1 or 2 expected)`;
  if (cls === 2 && b.length < 64) return 'its header is cut short';
  const u16 = (off: number) => (data === 1 ? b.readUInt16LE(off) : b.readUInt16BE(off));
  const type = u16(16);
  if (type !== 2 && type !== 3) return `it is not an executable or shared object (e_type ${type})`;
  const phentsize = u16(cls === 2 ? 54 : 42);
  if (phentsize !== (cls === 2 ? 56 : 32)) return `its program header size is ${phentsize}`;
  return undefined;
}
