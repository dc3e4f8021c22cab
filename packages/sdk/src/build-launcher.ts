import { shellQuote } from './helpers/shell-quote.js';

/**
 * Where a plugin's launcher looks for node, after the node it was built with. A Nomad
 * agent runs plugins with no PATH, so `#!/usr/bin/env node` finds nothing outside
 * /bin:/usr/bin; these are the places package managers, the official tarballs and
 * version managers put node on Linux and macOS. Globs are expanded by the shell.
 */
export const NODE_SEARCH_PATHS: readonly string[] = [
  '/usr/local/bin/node',
  '/usr/bin/node',
  '/bin/node',
  '/opt/homebrew/bin/node',
  '/opt/node/bin/node',
  '/opt/nodejs/bin/node',
  '/opt/*/bin/node',
  '/snap/bin/node',
  '/nix/var/nix/profiles/default/bin/node',
  '/run/current-system/sw/bin/node',
];

/**
 * The first two lines of a bundled plugin: a shell script that execs the first node it
 * finds with the file itself, and that JavaScript reads as a hashbang, a string and a
 * comment. Every host has /bin/sh, so the file starts even where the build machine's
 * node does not exist; when no node is found it answers as a plugin does, with one
 * `{"error": ...}` line on stdout and a non-zero exit. Given the plugin's fixed
 * fingerprint answer, it writes that itself once a node is found (so a host without
 * node still fails fingerprint), for the call exactly as the agent makes it.
 */
export function launcherHeader(
  builtWith: string,
  fixedFingerprint?: string,
  nodeFlags: readonly string[] = [],
): string {
  const candidates = [builtWith, ...NODE_SEARCH_PATHS.filter((path) => path !== builtWith)];
  for (const path of candidates) {
    if (!path.startsWith('/') || /[\n\r\0]/.test(path)) {
      throw new Error(`the launcher's node paths must be absolute and on one line, got ${JSON.stringify(path)}`);
    }
  }
  const words = candidates.map((path) => (path.includes('*') ? path : shellQuote(path))).join(' ');
  const error = JSON.stringify({ error: `no node executable found; looked in ${candidates.join(', ')}` });
  if (fixedFingerprint !== undefined && /[\n\r\0]/.test(fixedFingerprint)) {
    throw new Error(`the fixed fingerprint answer must be one line, got ${JSON.stringify(fixedFingerprint)}`);
  }
  const answer =
    fixedFingerprint === undefined
      ? ''
      : `[ "$1" = fingerprint ] && [ "$DHV_OPERATION" = fingerprint ] && { printf '%s\\n' ${shellQuote(fixedFingerprint)}; exit 0; }; `;
  const flags = nodeFlags.map((f) => `${shellQuote(f)} `).join('');
  return [
    '#!/bin/sh',
    `':' //; for n in ${words}; do [ -f "$n" ] && [ -x "$n" ] && { ${answer}exec "$n" ${flags}"$0" "$@"; }; done; printf '%s\\n' ${shellQuote(error)}; exit 127`,
  ].join('\n');
}
