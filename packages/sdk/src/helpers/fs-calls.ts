import * as fs from 'node:fs';
import { promisify } from 'node:util';

/**
 * node:fs's promise API for the calls plugins make, built on its callback API. Loading
 * node:fs/promises costs every plugin process a few milliseconds (it brings file
 * watchers and readline with it); the callback API is loaded with node itself. At
 * restore the agent starts one plugin process per volume, all at once.
 */
export const access = promisify(fs.access);
export const chmod = promisify(fs.chmod);
export const chown = promisify(fs.chown);
export const close = promisify(fs.close);
export const fchmod = promisify(fs.fchmod);
export const fchown = promisify(fs.fchown);
export const fstat = promisify(fs.fstat);
export const link = promisify(fs.link);
export const lstat = promisify(fs.lstat);
export const mkdir = promisify(fs.mkdir);
export const open = promisify(fs.open);
export const readFile = promisify(fs.readFile);
export const readdir = promisify(fs.readdir);
export const realpath = promisify(fs.realpath);
export const rename = promisify(fs.rename);
export const rm = promisify(fs.rm);
export const rmdir = promisify(fs.rmdir);
export const stat = promisify(fs.stat);
export const statfs = promisify(fs.statfs);
export const unlink = promisify(fs.unlink);
export const writeFile = promisify(fs.writeFile);
