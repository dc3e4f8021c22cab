/**
 * The entry of dhv's bundle (bin/build-cli.js): oclif's, bundled with the commands so that
 * oclif and the commands share one copy of it. bin/run.js starts it.
 */
export { execute } from '@oclif/core';
