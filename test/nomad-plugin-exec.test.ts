import { describe, expect, it } from 'vitest';
import { rm, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { processRunner } from '@dhv/harness';
import { discoverPlugins, PluginError, valueOf, valueWithRun } from '@dhv/sdk/client';
import { builtinMkdirRunner } from '../packages/harness/src/agent/builtin-mkdir-runner.js';
import { root, skipUnless } from './support/kit.js';
import {
  applyLayout,
  loadNomadVectors,
  makeRoot,
  recordedCalls,
  substitute,
  type Call,
  type LayoutEntry,
} from './support/nomad-replay.js';

/**
 * Every case of vectors/nomad-agent/plugin-exec.json, run through the code users run:
 * dhv's process runner with the plugin ID (the agent's lookup, then the run), the built-in for
 * `mkdir`, and discovery for what a fingerprint publishes. Compared: outcome, the exact
 * error, the response, and every call the plugin process saw (argv, the environment in
 * order, stdio kinds, cwd, umask).
 */

interface ExecCase {
  name: string;
  op: 'fingerprint' | 'create' | 'delete';
  plugin: { id: string; body?: string };
  layout?: LayoutEntry[];
  request: Record<string, unknown>;
  timeoutMs: number;
  timing?: boolean;
  nomad: {
    ok: boolean;
    response?: { path?: string; bytes?: string; version?: string | null; versionOriginal?: string | null };
    error?: string;
    errorIs?: string[];
    stage?: 'lookup' | 'run';
    elapsedMs?: number;
    published?: string | null;
    discoveryCrashes?: boolean;
    logged?: { message: string; error: string };
    calls: Call[];
  };
}

/**
 * Where dhv differs from Nomad on purpose (docs/nomad-differences.md): the case, why, and
 * what dhv does instead, which the test then checks.
 */
type Difference =
  | { kind: 'nil-version'; why: string }
  | { kind: 'empty-path'; why: string }
  | { kind: 'output-cap'; why: string }
  | { kind: 'stops-at-deadline'; why: string };

const NIL_VERSION =
  'a real agent panics (nil version) and dies; dhv skips the plugin and says a real agent would crash';
const EMPTY_PATH =
  'a real agent publishes a volume with an empty path that nobody can mount; dhv fails the create and says so';
const AT_DEADLINE =
  "a real agent waits for a process holding the plugin's output as long as it lives, past the deadline; dhv kills it at the deadline and says so";

export const DIFFERENCES: Record<string, Difference> = {
  'fp-empty-object': { kind: 'nil-version', why: NIL_VERSION },
  'fp-null-version': { kind: 'nil-version', why: NIL_VERSION },
  'fp-json-null': { kind: 'nil-version', why: NIL_VERSION },
  'cr-path-missing': { kind: 'empty-path', why: EMPTY_PATH },
  'cr-path-null': { kind: 'empty-path', why: EMPTY_PATH },
  'cr-path-empty': { kind: 'empty-path', why: EMPTY_PATH },
  'cr-json-null': { kind: 'empty-path', why: EMPTY_PATH },
  'cr-exit0-error-only': { kind: 'empty-path', why: EMPTY_PATH },
  'cr-huge-stdout': {
    kind: 'output-cap',
    why: 'a real agent keeps any amount of stdout; dhv stops at 4 MiB (its protective cap), kills the plugin and says so',
  },
  'fp-slow-orphan-holds-stdout': { kind: 'stops-at-deadline', why: AT_DEADLINE },
  'fp-background-child': { kind: 'stops-at-deadline', why: AT_DEADLINE },
  'cr-timeout-orphan': { kind: 'stops-at-deadline', why: AT_DEADLINE },
  'cr-background-child-past-timeout': { kind: 'stops-at-deadline', why: AT_DEADLINE },
};

const vectors = loadNomadVectors<ExecCase>('plugin-exec');
process.umask(0o022); // the agent's, as the vectors were measured

/** Measurements are ±300 ms on the machine that made them; this one is shared and loaded. */
const EARLY_MS = 300;
const LATE_MS = 1500;
/**
 * A case measured against a deadline runs again when it misses: on a machine loaded past
 * its cores a plugin that sleeps 500 ms can miss a 1 s deadline. A defect misses every time.
 */
const timed = (c: { timing?: boolean }) => ({ retry: c.timing ? 2 : 0 });

function requestOf(c: ExecCase): Record<string, unknown> {
  const r: Record<string, unknown> = { ...c.request };
  for (const k of ['capacityMinBytes', 'capacityMaxBytes']) if (typeof r[k] === 'string') r[k] = BigInt(r[k] as string);
  return r;
}

async function run(
  c: ExecCase,
  cwd: string,
): Promise<{ result?: Record<string, unknown>; error?: PluginError; elapsedMs: number }> {
  const request = requestOf(c);
  const started = performance.now();
  try {
    let result: Record<string, unknown>;
    if (c.plugin.id === 'mkdir' && c.op !== 'fingerprint') {
      const pluginDir = request.pluginDir as string;
      result = valueOf(
        await builtinMkdirRunner.run(c.op, { plugin: { pluginDir, pluginId: 'mkdir' }, request: request as never }),
      );
    } else {
      result = valueWithRun(
        await processRunner.run(c.op, {
          plugin: { pluginDir: request.pluginDir as string, pluginId: c.plugin.id },
          request: request as never,
          timeoutMs: c.timeoutMs,
          cwd,
        }),
      ) as unknown as Record<string, unknown>;
    }
    return { result, elapsedMs: performance.now() - started };
  } catch (err) {
    if (!(err instanceof PluginError)) throw err;
    return { error: err, elapsedMs: performance.now() - started };
  }
}

/** Cases whose outcome holds only for an agent running as root, as the vectors' was. */
const AS_ROOT: Record<string, string> = {
  'res-exec-bit-other-only': 'any execute bit lets root run a file; its owner needs its own',
};

describe.concurrent('plugin-exec.json: each case as a real agent ran it', () => {
  for (const raw of vectors.cases) {
    const asRoot = AS_ROOT[raw.name];
    const skip = asRoot !== undefined && skipUnless(`plugin-exec.json case ${raw.name} (${asRoot})`, root());
    it.skipIf(skip)(`${raw.name}${DIFFERENCES[raw.name] ? ' (a documented difference)' : ''}`, timed(raw), async () => {
      const root = await makeRoot();
      try {
        const c = substitute(raw, root.path);
        const recorder = substitute(vectors.recorder, root.path);
        if (c.layout) await applyLayout(root.path, recorder, c.layout);
        else
          await applyLayout(root.path, recorder, [
            { path: `plugins/${c.plugin.id}`, type: 'file', body: c.plugin.body ?? '' },
          ]);
        const difference = DIFFERENCES[raw.name];
        const got = await run(c, root.cwd);
        const n = c.nomad;

        // What the plugin process received: the same calls whatever the outcome (named, for a failure's sake).
        const outcome = got.error
          ? `${got.error.code}: ${got.error.message}`
          : JSON.stringify(got.result, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
        expect(await recordedCalls(root.path), `the run's outcome: ${outcome}`).toEqual(n.calls);

        if (difference?.kind === 'nil-version') {
          expect(got.error?.code).toBe('PLUGIN_BAD_OUTPUT');
          expect(got.error?.nomadPanic).toBe('runtime error: invalid memory address or nil pointer dereference');
          expect(got.error?.message).toMatch(/a real Nomad agent crashes here/);
        } else if (difference?.kind === 'empty-path') {
          expect(n.ok && n.response?.path).toBe('');
          expect(got.error?.code).toBe('PLUGIN_BAD_OUTPUT');
          expect(got.error?.message).toMatch(/without a "path"\na real Nomad agent accepts this/);
        } else if (difference?.kind === 'output-cap') {
          expect(got.error?.code).toBe('PLUGIN_BAD_OUTPUT');
          expect(got.error?.nomadMessage).toMatch(/dhv stopped reading stdout at 4 MiB/);
          expect(got.error?.message).toMatch(/a real agent reads any amount/);
        } else {
          expect({ ok: got.error === undefined, error: got.error?.nomadMessage }).toEqual({ ok: n.ok, error: n.error });
          if (got.error) {
            // dhv's own lines follow Nomad's message, never inside it.
            expect(got.error.message === n.error || got.error.message.startsWith(`${n.error}\n`)).toBe(true);
            if (n.stage) expect(got.error.operation === 'resolve' ? 'lookup' : 'run').toBe(n.stage);
            if (n.errorIs?.includes('ErrPluginNotExists')) expect(got.error.code).toBe('PLUGIN_NOT_FOUND');
            if (n.errorIs?.includes('ErrPluginNotExecutable')) expect(got.error.code).toBe('PLUGIN_NOT_EXECUTABLE');
          } else if (c.op === 'create') {
            expect({ path: got.result!.path, bytes: String(got.result!.bytes) }).toEqual(n.response);
          } else if (c.op === 'fingerprint') {
            expect({ version: got.result!.version, versionOriginal: got.result!.rawVersion }).toEqual(n.response);
          }
        }

        if (difference?.kind === 'stops-at-deadline') {
          // Nomad returned only when the lingering process exited; dhv at the deadline, saying so.
          expect(got.elapsedMs).toBeLessThan(n.elapsedMs!);
          expect(got.elapsedMs).toBeGreaterThanOrEqual(c.timeoutMs - EARLY_MS);
          const said = got.error ? got.error.message : (got.result!.warnings as string[]).join('\n');
          expect(said).toMatch(/a real agent (waits|kills only the plugin, then waits)/);
        } else if (c.timing) {
          expect(got.elapsedMs).toBeGreaterThanOrEqual(n.elapsedMs! - EARLY_MS);
          expect(got.elapsedMs).toBeLessThanOrEqual(n.elapsedMs! + LATE_MS);
        }

        if (c.op === 'fingerprint') {
          // What discovery publishes for this plugin dir, and the line it logs.
          await rm(join(root.path, 'records'), { recursive: true, force: true });
          await mkdir(join(root.path, 'records'));
          const discovery = await discoverPlugins(root.pluginDir, { cwd: root.cwd });
          const published = discovery.plugins.find((p) => p.id === c.plugin.id)?.version ?? null;
          expect(published).toBe(n.discoveryCrashes ? null : n.published);
          if (n.discoveryCrashes) expect(discovery.nomadCrash?.pluginId).toBe(c.plugin.id);
          if (n.logged) {
            const skipped = discovery.skipped.find((s) => s.id === c.plugin.id);
            expect({ message: skipped?.logged?.message, error: skipped?.logged?.error }).toEqual(n.logged);
          }
          expect(await recordedCalls(root.path)).toEqual(n.calls);
        }
      } finally {
        await root.cleanup();
      }
    });
  }
});
