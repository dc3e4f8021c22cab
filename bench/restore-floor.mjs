// The floor of a restore of built-in mkdir volumes: one plain Node process that does for
// each volume only what Nomad's built-in restore does to it: mkdir -p, chown, one stat.
// Run by restart.bench.mjs as `node bench/restore-floor.mjs <volumes dir> <id>...` (ids on stdin).
import { chownSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const volumesDir = process.argv[2];
const ids = readFileSync(0, 'utf8').split('\n').filter(Boolean);
const uid = process.getuid?.() ?? 0;
const gid = process.getgid?.() ?? 0;
for (const id of ids) {
  const path = join(volumesDir, id);
  mkdirSync(path, { recursive: true, mode: 0o700 });
  chownSync(path, uid, gid);
  statSync(path);
}
