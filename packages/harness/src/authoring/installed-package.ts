import { createRequire } from 'node:module';
import { dirname } from 'node:path';

/** The packages a generated project depends on, the SDK first. */
export const DHV_PACKAGES = ['@dhv/sdk', '@dhv/harness'] as const;
export type DhvPackage = (typeof DHV_PACKAGES)[number];

/**
 * The folder of the package that is running (the harness) or that it runs with (the
 * SDK it resolves): a workspace folder in this repo's checkout, or the installed
 * package under node_modules. Found by resolving the package's name (the harness names
 * itself), not from this file's place, which moves when the CLI is bundled (dist/cli/).
 */
export function installedPackageDir(packageName: DhvPackage): string {
  return dirname(createRequire(import.meta.url).resolve(`${packageName}/package.json`));
}
