/**
 * Go's (Linux) `syscall.Errno.Error()` texts for the errors dhv meets, so that an error
 * reads as a real agent's does (`fork/exec /x: exec format error`, `mkdir /x: file exists`).
 * The one table in dhv (test/go-homes.test.ts keeps it so).
 */
const GO_ERRNO_TEXT: Readonly<Record<string, string>> = {
  EPERM: 'operation not permitted',
  ENOENT: 'no such file or directory',
  EIO: 'input/output error',
  E2BIG: 'argument list too long',
  ENOEXEC: 'exec format error',
  EBADF: 'bad file descriptor',
  EAGAIN: 'resource temporarily unavailable',
  ENOMEM: 'cannot allocate memory',
  EACCES: 'permission denied',
  EFAULT: 'bad address',
  EBUSY: 'device or resource busy',
  EEXIST: 'file exists',
  EXDEV: 'invalid cross-device link',
  ENODEV: 'no such device',
  ENOTDIR: 'not a directory',
  EISDIR: 'is a directory',
  EINVAL: 'invalid argument',
  ENFILE: 'too many open files in system',
  EMFILE: 'too many open files',
  ETXTBSY: 'text file busy',
  EFBIG: 'file too large',
  ENOSPC: 'no space left on device',
  EROFS: 'read-only file system',
  EMLINK: 'too many links',
  ENAMETOOLONG: 'file name too long',
  ENOTEMPTY: 'directory not empty',
  ELOOP: 'too many levels of symbolic links',
  EOVERFLOW: 'value too large for defined data type',
  EDQUOT: 'disk quota exceeded',
  ESTALE: 'stale file handle',
  EUCLEAN: 'structure needs cleaning',
  ENOTSUP: 'operation not supported',
  EOPNOTSUPP: 'operation not supported',
};

/** Go's text for a Node error code (`ENOENT` → `no such file or directory`); a code not in the table, in lower case. */
export function goErrnoText(code: string): string {
  return Object.hasOwn(GO_ERRNO_TEXT, code) ? GO_ERRNO_TEXT[code]! : code.toLowerCase();
}
