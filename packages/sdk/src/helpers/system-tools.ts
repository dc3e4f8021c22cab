import { accessSync, constants, statSync } from 'node:fs';
import { PluginFailure } from './errors.js';
import { checkToolFault } from './fault-injection.js';

/**
 * Plugins run with no PATH, so system tools are looked up in the directories a Debian
 * or RHEL host keeps them in, and run with that same list as their PATH.
 */
export const SYSTEM_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'] as const;

export const TOOL_ENV = { PATH: SYSTEM_DIRS.join(':'), LC_ALL: 'C' } as const;

const found = new Map<string, string>();

/** The absolute path of a system tool; throws naming the package to install when it is missing. */
export function findTool(name: string, debianPackage?: string): string {
  const cached = found.get(name);
  if (cached) return cached;
  for (const dir of SYSTEM_DIRS) {
    const candidate = `${dir}/${name}`;
    try {
      // A missing candidate is the common case (flock is in /usr/bin, after three misses):
      // statSync says so without building an error, which costs a start-up milliseconds.
      if (statSync(candidate, { throwIfNoEntry: false }) === undefined) continue;
      accessSync(candidate, constants.X_OK);
      found.set(name, candidate);
      return candidate;
    } catch {
      // keep looking
    }
  }
  throw new PluginFailure(
    'ETOOLMISSING',
    `${name} was not found in ${SYSTEM_DIRS.join(', ')}${debianPackage ? `; install it (Debian/Ubuntu: apt-get install ${debianPackage})` : ''}`,
    { tool: name },
  );
}

type ChildProcessModule = typeof import('node:child_process');

/**
 * node:child_process, loaded on first use (fingerprint never needs it). Not by `import()`:
 * in a bundled CommonJS plugin that starts node's whole ESM loader first, which costs a
 * create several milliseconds of CPU; getBuiltinModule (node 20.16+) loads only the module.
 */
export async function loadChildProcess(): Promise<ChildProcessModule> {
  // Typed as always there; node 20.5 to 20.15 lacks it.
  if (typeof process.getBuiltinModule === 'function') return process.getBuiltinModule('node:child_process');
  return import('node:child_process');
}

export interface ToolResult {
  stdout: string;
  stderr: string;
}

export interface RunToolOptions {
  signal?: AbortSignal;
  /** The Debian package that provides the tool, named in the error when it is missing. */
  debianPackage?: string;
}

function toolFailure(
  name: string,
  args: readonly string[],
  why: string,
  output: string,
  details: { exitCode?: number | undefined; stderr: string },
): PluginFailure {
  return new PluginFailure('ETOOLFAILED', `${name} ${args.join(' ')} failed (${why}): ${output || 'no output'}`, {
    tool: name,
    args,
    exitCode: details.exitCode,
    stderr: details.stderr,
  });
}

/** Runs a system tool without a shell; a failure throws with the command, exit status and stderr. */
export async function runTool(
  name: string,
  args: readonly string[],
  options: RunToolOptions = {},
): Promise<ToolResult> {
  checkToolFault(name);
  const file = findTool(name, options.debianPackage);
  // Node would start the tool and kill it a moment later, which may be after it did its work.
  if (options.signal?.aborted) throw toolFailure(name, args, 'The operation was aborted', '', { stderr: '' });
  const { execFile } = await loadChildProcess();
  return new Promise((resolve, reject) => {
    execFile(
      file,
      [...args],
      { env: TOOL_ENV, signal: options.signal, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (!err) return resolve({ stdout, stderr });
        const status = (err as { code?: unknown }).code;
        const exitCode = typeof status === 'number' ? status : undefined;
        reject(
          toolFailure(
            name,
            args,
            exitCode === undefined ? err.message : `exit status ${exitCode}`,
            stderr.trim() || stdout.trim(),
            { exitCode, stderr },
          ),
        );
      },
    );
  });
}
