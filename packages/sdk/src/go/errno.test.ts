import { describe, expect, it } from 'vitest';
import { goErrnoText } from './errno.js';

// Expected texts are Go's syscall.Errno.Error() on Linux (run once by hand, kept here as text).
describe('goErrnoText', () => {
  it.each([
    ['ENOENT', 'no such file or directory'],
    ['EACCES', 'permission denied'],
    ['ENOEXEC', 'exec format error'],
    ['EEXIST', 'file exists'],
    ['ENOTDIR', 'not a directory'],
    ['ESTALE', 'stale file handle'],
    ['EOPNOTSUPP', 'operation not supported'],
  ])('%s reads %j', (code, text) => {
    expect(goErrnoText(code)).toBe(text);
  });

  it('lower-cases a code it does not know, and no name of Object.prototype is a code', () => {
    expect(goErrnoText('EWHATEVER')).toBe('ewhatever');
    expect(goErrnoText('toString')).toBe('tostring');
  });
});
