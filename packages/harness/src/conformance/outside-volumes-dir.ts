import { relative } from 'node:path';
import { isStrictlyInside } from '@dhv/sdk';
import { ENV } from '@dhv/sdk/plugin';

/**
 * What to say of a create that answered a path not inside the volumes dir: the plugin's to
 * answer (Nomad takes it), but worth a word, and dhv check's cleanup never unmounts
 * anything there. Undefined for a path inside it.
 */
export function outsideVolumesDirWarning(path: string, volumesDir: string): string | undefined {
  if (isStrictlyInside(volumesDir, path)) return undefined;
  const where = relative(volumesDir, path) === '' ? 'the volumes dir itself' : 'outside the volumes dir';
  return (
    `create answered the path ${path}, which is ${where} ${volumesDir} (${ENV.volumesDir}): ` +
    `a volume belongs at <volumes dir>/<volume id>; dhv check's cleanup never unmounts or removes anything outside its scratch dir`
  );
}
