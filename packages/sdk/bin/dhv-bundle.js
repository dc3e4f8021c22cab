#!/usr/bin/env node
// Bundles a plugin into one executable file; the same code path as `dhv build`.
import { bundlePlugin } from '../dist/build.js';

const [entry, outfile] = process.argv.slice(2);
if (!entry || !outfile) {
  process.stderr.write('usage: dhv-bundle <entry> <outfile>\n');
  process.exit(2);
}
try {
  const result = await bundlePlugin({ entry, outfile });
  process.stdout.write(`built ${result.outfile} (${result.bytes} bytes, #!${result.interpreter})\n`);
} catch (err) {
  process.stderr.write(`dhv-bundle: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
