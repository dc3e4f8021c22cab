'use strict';
const { closeSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } = require('node:fs');
const Module = require('node:module');
const { dirname } = require('node:path');
const vm = require('node:vm');
const { LOADED_BUNDLE } = require('./cli-files.cjs');

/**
 * Loads dhv's bundle (one CommonJS file) as `require` would, with V8's code cache: the
 * bytecode of every function the first run compiled, kept beside the bundle, so a run
 * does not parse and compile the bundle's megabyte again. The cache is written by a run
 * that found none it could use, when it exits, if the bundle's folder is writable (an
 * installed package run by its owner); V8 refuses a cache made by another V8, from other
 * flags or for other source, and that run writes it again. It lives only beside the
 * bundle, so whoever can change it can change the bundle itself.
 */
function loadBundle(file, { shared = true } = {}) {
  const cacheFile = `${file}.v8-cache`;
  let cachedData;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // No cache yet: this run compiles the bundle and writes one.
  }
  // Module.wrap's function, with one more argument: the bundle's import() (bin/build-cli.mjs).
  const wrapped = `(function (exports, require, module, __filename, __dirname, __dhvImportOutside) { ${readFileSync(file, 'utf8')}\n});`;
  const script = new vm.Script(wrapped, { filename: file, cachedData });
  const module = new Module(file);
  module.filename = file;
  module.paths = Module._nodeModulePaths(dirname(file));
  script
    .runInThisContext()
    .call(module.exports, module.exports, Module.createRequire(file), module, file, dirname(file), importFromOutside);
  // Each command's and hook's module takes its own from here (bin/build-cli.mjs); a lean
  // command's bundle (`shared: false`) has no such modules.
  if (shared) globalThis[Symbol.for(LOADED_BUNDLE)] = module.exports;
  if (cachedData === undefined || script.cachedDataRejected) process.once('exit', () => writeCache(script, cacheFile));
  return module.exports;
}

/** A real import(), compiled here and not in the bundle's cached code. */
function importFromOutside(specifier) {
  return import(specifier);
}

function writeCache(script, cacheFile) {
  const temp = `${cacheFile}.${process.pid}.tmp`;
  try {
    const fd = openSync(temp, 'wx', 0o644);
    try {
      writeSync(fd, script.createCachedData());
    } finally {
      closeSync(fd);
    }
    renameSync(temp, cacheFile);
  } catch {
    // A folder this run may not write: the next run compiles the bundle again.
    try {
      unlinkSync(temp);
    } catch {
      // nothing was written
    }
  }
}

module.exports = { loadBundle };
