import { isAbsolute, normalize, relative, sep } from 'node:path';
import { isUuid } from '../protocol/uuid.js';
import { PluginFailure } from './errors.js';

/** Whether `child` is strictly inside `parent` (both absolute; neither is resolved through links). */
export function isStrictlyInside(parent: string, child: string): boolean {
  const rel = relative(normalize(parent), normalize(child));
  // `..b` is a name inside; only `..` itself or `../...` leaves.
  return rel !== '' && rel !== '.' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/**
 * The directory a volume lives in, `<volumes dir>/<volume id>`, refused before anything
 * touches the disk when the ID is not a UUID or the result is not strictly inside the
 * volumes dir.
 */
export function volumePath(volumesDir: string, volumeId: string): string {
  if (!isAbsolute(volumesDir)) {
    throw new PluginFailure('EUNSAFEPATH', `volumes dir must be an absolute path, got ${JSON.stringify(volumesDir)}`);
  }
  if (!isUuid(volumeId)) {
    throw new PluginFailure('EUNSAFEPATH', `volume ID must be a UUID, got ${JSON.stringify(volumeId)}`);
  }
  const dir = normalize(volumesDir).replace(/\/+$/, '') || '/';
  const path = `${dir === '/' ? '' : dir}${sep}${volumeId}`;
  if (!isStrictlyInside(dir, path)) {
    throw new PluginFailure('EUNSAFEPATH', `volume path ${path} is not inside the volumes dir ${dir}`);
  }
  return path;
}

/**
 * Refuses a delete whose DHV_CREATED_PATH is set but is not the path create makes, so a
 * confused or hostile caller cannot make a plugin remove something else.
 */
export function expectCreatedPath(createdPath: string, expected: string): void {
  if (createdPath === '') return;
  if (normalize(createdPath).replace(/\/+$/, '') !== expected) {
    throw new PluginFailure(
      'ECREATEDPATH',
      `refusing to delete: DHV_CREATED_PATH is ${JSON.stringify(createdPath)}, but this volume lives at ${JSON.stringify(expected)}`,
    );
  }
}
