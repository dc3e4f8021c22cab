/**
 * oclif's entry, as dhv's bundle (bin/build-cli.mjs) exports it beside the commands, so that
 * oclif and the commands share one copy of it. bin/run.js starts it.
 */
export { execute } from '@oclif/core';
