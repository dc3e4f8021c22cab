import { join } from 'node:path';
import { execa } from 'execa';
import fs from 'fs-extra';
import { DHV_BIN } from './checkout-paths.js';

/**
 * The docs examples' stand-ins for what a Nomad client or a reader's shell has (listed at the top of
 * docs-blocks.ts, which runs the examples with them first on PATH).
 */
const script = (lines: readonly string[]) => ({ text: [...lines, ''].join('\n'), mode: 0o755 });

/** The stand-ins on PATH (see the top of docs-blocks.ts), written into `bin`. */
export async function writeStandIns(bin: string): Promise<void> {
  const realNpm = (await execa('sh', ['-c', 'command -v npm'])).stdout.trim();
  const realNpx = (await execa('sh', ['-c', 'command -v npx'])).stdout.trim();
  const files = {
    npx: script([
      '#!/bin/sh',
      '# `npx dhv` in a folder whose own node_modules/.bin has dhv (the checkout, a project after npm install)',
      '# runs that dhv, as npx would there, without the start of npm itself (about 0.35 s of processor time,',
      '# some thirty times a run). `dhv init`, which runs npm, and anything else go through npx.',
      'own_dhv() { [ "$1" = dhv ] && [ "${2:-}" != init ] && [ -f package.json ] && [ -x node_modules/.bin/dhv ]; }',
      `run_npx() { if own_dhv "$@"; then shift; PATH="$PWD/node_modules/.bin:$PATH" "$PWD/node_modules/.bin/dhv" "$@"; else ${realNpx} "$@"; fi; }`,
      '# With DOCS_EXAMPLES_MEMO set, an `npx dhv check FILE ...` that passed once (the same arguments, the same',
      "# file's bytes) is not run again: two pages that show the same check prove the same thing. Its output is shown.",
      'if [ -n "${DOCS_EXAMPLES_MEMO:-}" ] && [ "$1 $2" = "dhv check" ] && [ -f "$3" ]; then',
      '  memo="$DOCS_EXAMPLES_MEMO/$( { printf \'%s\\n\' "$*"; cat -- "$3"; } | sha256sum | cut -c1-32)"',
      '  exec 9>"$memo.lock" && flock 9',
      '  if [ ! -e "$memo.passed" ]; then',
      '    rc=0; run_npx "$@" >"$memo.out" 2>"$memo.err" 9>&- || rc=$?',
      '    if [ $rc -ne 0 ]; then cat "$memo.out"; cat "$memo.err" >&2; exit $rc; fi',
      '    : >"$memo.passed"',
      '  else echo "(docs examples: this check passed once already in this run, with this output)" >&2',
      '  fi',
      '  cat "$memo.out"; cat "$memo.err" >&2; exit 0',
      'fi',
      'if own_dhv "$@"; then shift; PATH="$PWD/node_modules/.bin:$PATH" exec "$PWD/node_modules/.bin/dhv" "$@"; fi',
      `exec ${realNpx} "$@"`,
    ]),
    npm: script([
      '#!/bin/sh',
      '# In a copy of the checkout, `npm ci` and `npm run build` were done before the tests ran.',
      'if [ -e "$PWD/.docs-examples-checkout" ]; then case "$*" in ci|"run build") exit 0 ;; esac; fi',
      '# A global install is the operator host of the one-file install: no registry, nothing cached.',
      'case "$1 $2" in',
      '  "install -g"|"i -g")',
      '    npm_config_cache=$(mktemp -d "$DOCS_EXAMPLES_RUN/empty-npm-cache-XXXXXX") npm_config_registry=http://127.0.0.1:9 npm_config_fetch_retries=0',
      '    export npm_config_cache npm_config_registry npm_config_fetch_retries ;;',
      'esac',
      `exec ${realNpm} "$@"`,
    ]),
    sudo: script(['#!/bin/sh', '# Root already.', 'exec "$@"']),
    nomad: script([
      '#!/bin/sh',
      '# A Nomad client stand-in: dhv simulates its agent, with the client plugin dir.',
      'case "$1 $2" in',
      `  "volume create") [ $# -eq 3 ] && exec ${process.execPath} ${DHV_BIN} volume create "$3" --plugin-dir /opt/nomad/data/host_volume_plugins ;;`,
      `  "node status") exec ${process.execPath} ${DHV_BIN} "$@" --plugin-dir /opt/nomad/data/host_volume_plugins ;;`,
      `  "volume status") exec ${process.execPath} ${DHV_BIN} "$@" ;;`,
      'esac',
      'echo "nomad stand-in of the docs examples: only nomad volume create SPEC, node status and volume status are simulated, not: nomad $*" >&2',
      'exit 2',
    ]),
    systemctl: script([
      '#!/bin/sh',
      '# The simulated agent finds plugins on every command: there is nothing to reload.',
      '[ "$*" = "reload nomad" ] && exit 0',
      'echo "systemctl stand-in of the docs examples: only systemctl reload nomad, not: systemctl $*" >&2',
      'exit 2',
    ]),
  };
  for (const [name, file] of Object.entries(files))
    await fs.outputFile(join(bin, name), file.text, { mode: file.mode });
}
