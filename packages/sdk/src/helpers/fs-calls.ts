import {
  access as accessCallback,
  chmod as chmodCallback,
  chown as chownCallback,
  close as closeCallback,
  fchmod as fchmodCallback,
  fchown as fchownCallback,
  fstat as fstatCallback,
  fsync as fsyncCallback,
  link as linkCallback,
  lstat as lstatCallback,
  mkdir as mkdirCallback,
  open as openCallback,
  readFile as readFileCallback,
  readdir as readdirCallback,
  realpath as realpathCallback,
  rename as renameCallback,
  rm as rmCallback,
  rmdir as rmdirCallback,
  stat as statCallback,
  statfs as statfsCallback,
  unlink as unlinkCallback,
  writeFile as writeFileCallback,
} from 'node:fs';
import { promisify } from 'node:util';

/**
 * node:fs's promise API for the calls plugins make, built on its callback API. Loading
 * node:fs/promises costs every plugin process a few milliseconds (it brings file
 * watchers and readline with it); the callback API is loaded with node itself. At
 * restore the agent starts one plugin process per volume, all at once. Each call is
 * promisified on first use, so a process pays only for the calls it makes. Named imports,
 * not `* as fs`: a bundle would copy every export of node:fs into a namespace object.
 */
function onFirstCall<F extends (...args: never[]) => unknown>(make: () => F): F {
  let made: F | undefined;
  return ((...args: Parameters<F>) => (made ??= make())(...args)) as F;
}

export const access = onFirstCall(() => promisify(accessCallback));
export const chmod = onFirstCall(() => promisify(chmodCallback));
export const chown = onFirstCall(() => promisify(chownCallback));
export const close = onFirstCall(() => promisify(closeCallback));
export const fchmod = onFirstCall(() => promisify(fchmodCallback));
export const fchown = onFirstCall(() => promisify(fchownCallback));
export const fstat = onFirstCall(() => promisify(fstatCallback));
export const fsync = onFirstCall(() => promisify(fsyncCallback));
export const link = onFirstCall(() => promisify(linkCallback));
export const lstat = onFirstCall(() => promisify(lstatCallback));
export const mkdir = onFirstCall(() => promisify(mkdirCallback));
export const open = onFirstCall(() => promisify(openCallback));
export const readFile = onFirstCall(() => promisify(readFileCallback));
export const readdir = onFirstCall(() => promisify(readdirCallback));
export const realpath = onFirstCall(() => promisify(realpathCallback));
export const rename = onFirstCall(() => promisify(renameCallback));
export const rm = onFirstCall(() => promisify(rmCallback));
export const rmdir = onFirstCall(() => promisify(rmdirCallback));
export const stat = onFirstCall(() => promisify(statCallback));
export const statfs = onFirstCall(() => promisify(statfsCallback));
export const unlink = onFirstCall(() => promisify(unlinkCallback));
export const writeFile = onFirstCall(() => promisify(writeFileCallback));
