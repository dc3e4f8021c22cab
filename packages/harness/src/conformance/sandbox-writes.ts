import { constants } from 'node:fs';
import { open, realpath, type FileHandle } from 'node:fs/promises';
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
  const real = await insideSandbox(scope, volumePath);
  const flags =
    constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | (append ? constants.O_APPEND : constants.O_TRUNC);
  return open(join(real, name), flags, 0o644);
}

/**
 * The volume as the kernel names it now, when that lies inside the sandbox as it was made;
 * else an OutsideSandboxError. Whatever writes into a volume (a marker, a task) asks first.
 */
export async function insideSandbox(scope: TeardownScope, volumePath: string): Promise<string> {
  const real = await realpath(volumePath).catch(() => volumePath);
  if (!isStrictlyInside(scope.canonical, real)) throw new OutsideSandboxError(volumePath, scope.dir);
  return real;
}

/** Writes `content` into `name` in a volume inside the sandbox (openInsideSandbox). */
export async function writeInsideSandbox(
  scope: TeardownScope,
  volumePath: string,
  name: string,
  content: string,
): Promise<void> {
  const handle = await openInsideSandbox(scope, volumePath, name);
  try {
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
}

/** Why a check that writes into a volume cannot judge one outside the sandbox. */
export function outsideSandboxSkip(err: OutsideSandboxError): string {
  return `${err.message}, so this check cannot write the data it would look for afterwards`;
}
