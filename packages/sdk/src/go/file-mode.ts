/**
 * Go's `os.FileMode` as the kernel gets it. Go keeps setuid, setgid and sticky in bits of
 * its own, above the permission bits, so a plugin that reads a mode as Go does must turn it
 * into a Unix mode this way before chmod.
 */

const GO_MODE_SETUID = 1 << 23;
const GO_MODE_SETGID = 1 << 22;
const GO_MODE_STICKY = 1 << 20;

/**
 * Go's `syscallMode`: the permission bits, and setuid, setgid and sticky only from Go's
 * own bits (so Unix octal `2775` loses its setgid, and `20000775` sets it).
 */
export function goSyscallMode(goMode: number): number {
  let mode = goMode & 0o777;
  if (goMode & GO_MODE_SETUID) mode |= 0o4000;
  if (goMode & GO_MODE_SETGID) mode |= 0o2000;
  if (goMode & GO_MODE_STICKY) mode |= 0o1000;
  return mode;
}
