import { open } from 'node:fs/promises';

/**
 * The agent starts a plugin with execve(2), which refuses a file that is neither a
 * binary nor a `#!` script ("exec format error"). libuv's spawn instead falls back to
 * running such a file with /bin/sh, so a plugin that works here would fail under a
 * real agent. This tells the two apart before spawning: an ENOEXEC error for a file
 * that starts with neither `#!` nor an ELF header, undefined otherwise (including when
 * the file cannot be read, which spawning will report better).
 */
export async function execFormatError(executable: string): Promise<NodeJS.ErrnoException | undefined> {
  let head: Buffer;
  try {
    const file = await open(executable, 'r');
    try {
      const buffer = Buffer.alloc(4);
      const { bytesRead } = await file.read(buffer, 0, 4, 0);
      head = buffer.subarray(0, bytesRead);
    } finally {
      await file.close();
    }
  } catch {
    return undefined;
  }
  if (head.subarray(0, 2).toString('latin1') === '#!') return undefined;
  if (head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]))) return undefined;
  const err: NodeJS.ErrnoException = new Error(`spawn ${executable} ENOEXEC`);
  err.code = 'ENOEXEC';
  err.errno = -8;
  err.syscall = 'spawn';
  err.path = executable;
  return err;
}
