import * as fs from 'node:fs';
import { promisify } from 'node:util';

/**
 * node:fs's promise API for the calls plugins make, built on its callback API. Loading
 * node:fs/promises costs every plugin process a few milliseconds (it brings file
 * watchers and readline with it); the callback API is loaded with node itself. At
 * restore the agent starts one plugin process per volume, all at once. Each call is
 * promisified on first use, so a process pays only for the calls it makes.
 */
function onFirstCall<F extends (...args: never[]) => unknown>(make: () => F): F {
  let made: F | undefined;
  return ((...args: Parameters<F>) => (made ??= make())(...args)) as F;
}

export const access = onFirstCall(() => promisify(fs.access));
export const chmod = onFirstCall(() => promisify(fs.chmod));
export const chown = onFirstCall(() => promisify(fs.chown));
export const close = onFirstCall(() => promisify(fs.close));
export const fchmod = onFirstCall(() => promisify(fs.fchmod));
export const fchown = onFirstCall(() => promisify(fs.fchown));
export const fstat = onFirstCall(() => promisify(fs.fstat));
export const link = onFirstCall(() => promisify(fs.link));
export const lstat = onFirstCall(() => promisify(fs.lstat));
export const mkdir = onFirstCall(() => promisify(fs.mkdir));
export const open = onFirstCall(() => promisify(fs.open));
export const readFile = onFirstCall(() => promisify(fs.readFile));
export const readdir = onFirstCall(() => promisify(fs.readdir));
export const realpath = onFirstCall(() => promisify(fs.realpath));
export const rename = onFirstCall(() => promisify(fs.rename));
export const rm = onFirstCall(() => promisify(fs.rm));
export const rmdir = onFirstCall(() => promisify(fs.rmdir));
export const stat = onFirstCall(() => promisify(fs.stat));
export const statfs = onFirstCall(() => promisify(fs.statfs));
export const unlink = onFirstCall(() => promisify(fs.unlink));
export const writeFile = onFirstCall(() => promisify(fs.writeFile));
