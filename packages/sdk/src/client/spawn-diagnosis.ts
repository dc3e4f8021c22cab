import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import { describeFileType } from './exec-format.js';

/**
 * Why a plugin file that is there cannot run, as the kernel sees it, with the one-line fix:
 * the one home for it, read by the SDK's spawn (a run's `spawnProblem`, so `dhv plugin run`,
 * discovery, volume creates and `dhv check`'s runs all say the same) and by `dhv check`
 * before it starts. execve's errno alone misleads: a script saved with CRLF line endings, a
 * missing #! interpreter and a missing ELF loader all read "no such file or directory" for
 * a file that exists.
 */
export interface SpawnDiagnosis {
  reason: string;
  fix: string;
}

export const formatDiagnosis = ({ reason, fix }: SpawnDiagnosis) => `${reason}; ${fix}`;

/** What is wrong with `executable` that execve would refuse, or undefined when nothing dhv can name is. */
export function diagnoseExecutable(executable: string, depth = 0): SpawnDiagnosis | undefined {
  const head = readHead(executable, 4096);
  // Past the kernel's 4 levels of #! the errno (ELOOP) says it already.
  if (head === undefined || depth > 4) return undefined;
  if (head[0] === 0x23 && head[1] === 0x21) return scriptProblem(executable, head, depth);
  if (head[0] === 0x7f && head[1] === 0x45 && head[2] === 0x4c && head[3] === 0x46) return elfProblem(head);
  return undefined;
}

function scriptProblem(executable: string, head: Buffer, depth: number): SpawnDiagnosis | undefined {
  const line = head.toString('latin1').slice(2).split('\n')[0]!;
  const interpreter = line.replace(/^[ \t]+/, '').split(/[ \t]/)[0] ?? '';
  if (interpreter.endsWith('\r')) {
    return {
      reason: `it has Windows (CRLF) line endings: its #! line ends with a carriage return, so the kernel looks for an interpreter named "${interpreter.slice(0, -1)}\\r", which does not exist`,
      fix: `convert it to Unix line endings: sed -i 's/\\r$//' ${executable}`,
    };
  }
  if (interpreter === '') {
    return {
      reason: 'its #! line names no interpreter',
      fix: 'begin it with a #! line naming an absolute path that exists, e.g. #!/bin/sh (an agent has no PATH)',
    };
  }
  const found = statOf(interpreter);
  if (!found) {
    return {
      reason: `its #! line names ${interpreter}, which does not exist on this host (an agent has no PATH either)`,
      fix: `install ${interpreter}, or change the #! line to an interpreter that exists, e.g. #!/bin/sh`,
    };
  }
  if (!found.isFile() || !isExecutable(interpreter)) {
    return {
      reason: `its #! line names ${interpreter}, which is ${describeFileType(found) ?? 'a file with no execute bit'}, not a program`,
      fix: 'change the #! line to an interpreter that exists, e.g. #!/bin/sh',
    };
  }
  const inner = diagnoseExecutable(interpreter, depth + 1);
  if (inner) return { reason: `its #! interpreter ${interpreter} cannot run: ${inner.reason}`, fix: inner.fix };
  return undefined;
}

/** The loader a dynamically linked program names (PT_INTERP) when it is missing: the kernel says ENOENT for the program. */
function elfProblem(head: Buffer): SpawnDiagnosis | undefined {
  const cls = head[4];
  const little = head[5] === 1;
  if ((cls !== 1 && cls !== 2) || head.length < (cls === 2 ? 64 : 52)) return undefined;
  const u16 = (off: number) => (little ? head.readUInt16LE(off) : head.readUInt16BE(off));
  const u32 = (off: number) => (little ? head.readUInt32LE(off) : head.readUInt32BE(off));
  const word = (off: number) =>
    cls === 2 ? Number(little ? head.readBigUInt64LE(off) : head.readBigUInt64BE(off)) : u32(off);
  // PT_INTERP: the loader a dynamically linked program needs; the kernel says ENOENT when it is missing.
  const phoff = word(cls === 2 ? 32 : 28);
  const phentsize = u16(cls === 2 ? 54 : 42);
  const phnum = u16(cls === 2 ? 56 : 44);
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * phentsize;
    if (at + phentsize > head.length) break;
    if (u32(at) !== 3) continue;
    const offset = word(at + (cls === 2 ? 8 : 4));
    const size = word(at + (cls === 2 ? 32 : 16));
    if (offset + size > head.length || size === 0) break;
    const loader = head.subarray(offset, offset + size - 1).toString('latin1');
    if (!statOf(loader)) {
      return {
        reason: `it is dynamically linked, and its loader ${loader} (the ELF interpreter) does not exist on this host: it was built for another C library or distribution`,
        fix: 'build it statically (e.g. CGO_ENABLED=0 go build), or on a host like this one',
      };
    }
    break;
  }
  return undefined;
}

function readHead(path: string, bytes: number): Buffer | undefined {
  try {
    if (!statSync(path).isFile()) return undefined;
    const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    try {
      const head = Buffer.alloc(bytes);
      return head.subarray(0, readSync(fd, head, 0, bytes, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

function statOf(path: string) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
