#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execute } from '@oclif/core';
import { MANIFEST, ROOT, buildStamp, writeManifest } from './oclif-manifest.js';

/**
 * package.json lists the commands explicitly (dist/commands/index.js, which imports them
 * all). With a manifest that matches the compiled commands, dhv instead loads each command
 * from its own file and only the one that runs: the manifest carries every command's help.
 */
async function loadOptions() {
  const pjson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  // An installed package has no build info: the manifest it was packed with is its own.
  const stamp = await buildStamp();
  const made = readManifestStamp();
  let usable = made !== null && (stamp === undefined || made === stamp);
  if (!usable && stamp !== undefined)
    usable = await writeManifest().then(
      () => true,
      () => false,
    );
  if (!usable) return { root: ROOT, pjson };
  return {
    root: ROOT,
    pjson: { ...pjson, oclif: { ...pjson.oclif, commands: { strategy: 'pattern', target: './dist/commands' } } },
  };
}

/** The build stamp the manifest was made from, or null without a manifest. */
function readManifestStamp() {
  try {
    return JSON.parse(readFileSync(MANIFEST, 'utf8')).dhvBuild;
  } catch {
    return null;
  }
}

await execute({ loadOptions: await loadOptions() });
