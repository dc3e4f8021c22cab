import { closeSync, constants, openSync, realpathSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { isStrictlyInside } from '@dhv/sdk';
import type { TeardownScope } from '@dhv/sdk/host';

/*
 * The only way dhv check writes into a volume (the markers that show whether a volume
 * keeps its data, the file a workload holds open): inside the sandbox, or not at all.
 */

/** A volume path a plugin answered that lies outside dhv check's sandbox: read there, never written. */
export class OutsideSandboxError extends Error {
  constructor(
    readonly volumePath: string,
    readonly sandbox: string,
  ) {
    super(
      `the volume's path ${volumePath} lies outside dhv check's sandbox ${sandbox}: dhv check reads a path a plugin answers but never writes outside its sandbox`,
    );
  }
}

const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_TRUNC;
const APPEND_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_APPEND;

/**
 * Opens `name` in a volume for writing (`append`: keeps what is there), only when the
 * volume, as the kernel names it now, lies inside the sandbox as it was made, and never
 * through a link at `name`: whatever path a plugin answers, dhv check writes nowhere else.
 */
export async function openInsideSandbox(
  scope: TeardownScope,
  volumePath: string,
  name: string,
  append = false,
): Promise<FileHandle> {
  const real = insideSandbox(scope, volumePath);
  return open(join(real, name), append ? APPEND_FLAGS : WRITE_FLAGS, 0o644);
}

/**
 * The volume as the kernel names it now, when that lies inside the sandbox as it was made;
 * else an OutsideSandboxError. Whatever writes into a volume (a marker, a task) asks first.
 */
export function insideSandbox(scope: TeardownScope, volumePath: string): string {
  let real = volumePath;
  try {
    real = realpathSync.native(volumePath, 'utf8');
  } catch {
    // A path the kernel cannot name is judged as the plugin answered it.
  }
  if (!isStrictlyInside(scope.canonical, real)) throw new OutsideSandboxError(volumePath, scope.dir);
  return real;
}

/**
 * Writes `content` into `name` in a volume inside the sandbox, as openInsideSandbox opens it.
 * Synchronous: a small file on a local disk, written after every explorer create (and 64 of
 * them per `write` step), costs less CPU than the thread pool's round trips.
 */
export function writeInsideSandbox(scope: TeardownScope, volumePath: string, name: string, content: string): void {
  const fd = openSync(join(insideSandbox(scope, volumePath), name), WRITE_FLAGS, 0o644);
  try {
    writeFileSync(fd, content);
  } finally {
    closeSync(fd);
  }
}

/** Why a check that writes into a volume cannot judge one outside the sandbox. */
export function outsideSandboxSkip(err: OutsideSandboxError): string {
  return `${err.message}, so this check cannot write the data it would look for afterwards`;
}
