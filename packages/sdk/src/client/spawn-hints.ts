import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type { PluginRun } from './plugin-run.js';

/** Linux's MAX_ARG_STRLEN: the most one argument or one `NAME=value` may take, its NUL included. */
export const MAX_ARG_STRLEN = 32 * 4096;

/** What dhv can tell about a plugin that could not be started, beyond execve's one word. */
export function spawnHints(run: PluginRun, executable: string): string[] {
  if (run.spawnProblem) return [`${executable}: ${run.spawnProblem}`];
  const entries = Object.entries(run.env);
  switch (run.spawnError?.code) {
    case 'ENOENT':
      return [`${executable} does not exist`];
    case 'EACCES':
      if (noExecuteBit(executable)) return [`${executable} has no execute bit (chmod +x it)`];
      return [`${executable} cannot be executed by dhv's user`];
    case 'ELOOP':
      return [
        `${executable}: the kernel gave up on its #! line: its interpreter${shebang(executable) ? ` (${shebang(executable)})` : ''} is itself a script, the plugin itself or one more than 4 levels deep`,
      ];
    case 'E2BIG': {
      const sizes = entries
        .map(([k, v]) => [k, Buffer.byteLength(`${k}=${v}`) + 1] as const)
        .sort((a, b) => b[1] - a[1]);
      const biggest = sizes[0];
      const total = sizes.reduce((n, [, s]) => n + s, 0);
      if (biggest && biggest[1] > MAX_ARG_STRLEN) {
        return [
          `${biggest[0]} is ${biggest[1]} bytes: Linux passes at most ${MAX_ARG_STRLEN} bytes (MAX_ARG_STRLEN) in one environment variable; make the volume name or parameters smaller`,
        ];
      }
      return [
        `the plugin's environment is ${total} bytes in all, more than Linux's limit for arguments and environment together (ARG_MAX: a quarter of the stack size limit); make the parameters smaller`,
      ];
    }
    case 'EINVAL': {
      const withNul = entries.find(([k, v]) => k.includes('\0') || v.includes('\0'));
      return [
        withNul
          ? `${withNul[0]} contains a NUL byte, which no environment variable can carry`
          : 'an argument or environment variable contains a NUL byte',
      ];
    }
    default:
      return [];
  }
}

function noExecuteBit(executable: string): boolean {
  try {
    const info = statSync(executable);
    return info.isFile() && (info.mode & 0o111) === 0;
  } catch {
    return false;
  }
}

/** The interpreter a `#!` line names, if the file is readable and has one. */
function shebang(executable: string): string | undefined {
  try {
    const fd = openSync(executable, 'r');
    try {
      const head = Buffer.alloc(256);
      const n = readSync(fd, head, 0, head.length, 0);
      const text = head.subarray(0, n).toString('latin1');
      if (!text.startsWith('#!')) return undefined;
      return text.slice(2).split('\n')[0]!.trim().split(/[ \t]/)[0] || undefined;
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}
