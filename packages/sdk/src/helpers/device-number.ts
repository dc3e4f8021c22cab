/** `major:minor` of a device number (`stat`'s `dev` or `rdev`), as mountinfo prints it. */
export function formatDeviceNumber(dev: number | bigint): string {
  const n = BigInt(dev);
  const major = ((n >> 8n) & 0xfffn) | ((n >> 32n) & ~0xfffn);
  const minor = (n & 0xffn) | ((n >> 12n) & ~0xffn);
  return `${major}:${minor}`;
}
