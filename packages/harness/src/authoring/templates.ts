import { join } from 'node:path';
import { installedPackageDir } from './installed-package.js';

/** The project skeletons `dhv init` offers, and what each one fills into the shared files. */
export const TEMPLATES = {
  minimal: {
    summary:
      'Each volume is a directory under the volumes dir: the smallest plugin that passes `dhv check`, to grow from.',
    needsRoot: false,
  },
  mkdir: {
    summary:
      'Each volume is a directory with the mode the spec asks for (`parameters { mode = "0750" }`); create reports the free space of its filesystem and refuses when it is below `capacity_min`.',
    needsRoot: false,
  },
  loopback: {
    summary:
      'Each volume is an ext4 filesystem in a sparse image file, loop-mounted under the volumes dir, so workloads cannot write more than its capacity; a create asking for more grows it, and a failed create is undone through `ctx.undo`. Built on the host toolkit, `@dhv/sdk/host`.',
    needsRoot: true,
  },
} as const satisfies Record<string, { summary: string; needsRoot: boolean }>;

export type TemplateName = keyof typeof TEMPLATES;

export const TEMPLATE_NAMES = Object.keys(TEMPLATES) as TemplateName[];

export function isTemplateName(name: string): name is TemplateName {
  return Object.hasOwn(TEMPLATES, name);
}

/** `templates/` in the package root: `common/` for every project, then one folder per template. */
export const TEMPLATES_DIR = join(installedPackageDir('@dhv/harness'), 'templates');

/** Files npm would drop or rename when packing the harness are stored under another name. */
export const STORED_NAMES: Readonly<Record<string, string>> = { gitignore: '.gitignore' };
