#!/usr/bin/env node
// Bundles a plugin into one executable file; the same code path as `dhv build`.
import { parseArgs } from 'node:util';
import { bundlePlugin } from '@dhv/sdk/build';

const USAGE = `usage: dhv-bundle <entry> <outfile> [--node /abs/path/to/node] [--fixed-node] [--no-minify] [--json]

Bundles a plugin written with definePlugin (the entry's default export) into one
executable file: every dependency inside, mode 755, starting with a /bin/sh launcher
that runs the first node it finds (the Nomad agent gives plugins no PATH). Copy the
file into the client's host_volume_plugin_dir; its file name is the plugin ID. When
the plugin's fingerprint is its version alone, the launcher answers the agent's
fingerprint itself, without starting node (the build loads the module once to read it).

  --node PATH    the node tried first (default: this node, ${process.execPath})
  --fixed-node   start with #!PATH instead: only hosts with node at PATH can run it
  --no-minify    keep the output readable
  --json         print the result as JSON
`;

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      node: { type: 'string' },
      'fixed-node': { type: 'boolean' },
      'no-minify': { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
} catch (err) {
  process.stderr.write(`dhv-bundle: ${err.message}\n\n${USAGE}`);
  process.exit(2);
}
const { values, positionals } = parsed;
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (positionals.length !== 2) {
  process.stderr.write(`dhv-bundle: expected an entry and an output file\n\n${USAGE}`);
  process.exit(2);
}
const [entry, outfile] = positionals;
try {
  const result = await bundlePlugin({
    entry,
    outfile,
    ...(values.node ? { nodePath: values.node } : {}),
    ...(values['no-minify'] ? { minify: false } : {}),
    ...(values['fixed-node'] ? { launcher: 'fixed' } : {}),
  });
  const starts =
    result.launcher === 'fixed' ? `#!${result.interpreter}` : `runs ${result.interpreter} or the first node found`;
  process.stdout.write(
    values.json ? `${JSON.stringify(result)}\n` : `built ${result.outfile} (${result.bytes} bytes, ${starts})\n`,
  );
} catch (err) {
  if (values.json)
    process.stdout.write(`${JSON.stringify({ error: err instanceof Error ? err.message : String(err) })}\n`);
  process.stderr.write(`dhv-bundle: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
