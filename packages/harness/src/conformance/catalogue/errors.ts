import { decodeErrorOutput, outputText } from '@dhv/sdk/client';
import { looksLikeStackTrace, parsePluginStdout } from '../inspect.js';
import { clip, describeRun, succeeded } from '../raw-run.js';
import type { Check, CheckContext } from '../types.js';
import { added, listTree } from './volume-files.js';
import { lifecycleRuns, refusableRequest, UNKNOWN_OPERATION, UNKNOWN_PARAMETER } from './lifecycle.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ENV } from '@dhv/sdk/plugin';

const REF = 'PROTOCOL.md § Running an operation';

export const errorChecks: Check[] = [
  {
    id: 'errors.unknown-operation',
    area: 'errors',
    title: 'An unknown operation exits non-zero.',
    protocolRef: REF,
    severity: 'recommended',
    gradeReason:
      'the agent only ever sends fingerprint, create and delete; exiting 0 on anything else breaks nothing today, only a future operation',
    asks: 'the shared calls: 1 volume at the capacities given (created twice, deleted twice), a delete of a volume never created, an unknown operation, a create with an unknown parameter',
    needs: ['discovery.executable'],
    async run(ctx: CheckContext) {
      const run = (await lifecycleRuns(ctx)).find((r) => r.operation === UNKNOWN_OPERATION)!.run;
      if (run.spawnError) ctx.skip(`the plugin could not be started: ${run.spawnError}`);
      if (succeeded(run))
        ctx.fail(`operation "${UNKNOWN_OPERATION}" exited 0; a future agent operation would be taken as done`);
    },
  },
  {
    id: 'errors.failure-output',
    area: 'errors',
    title: 'On failure stdout is empty or one {"error": ...} document.',
    protocolRef: 'PROTOCOL.md § create',
    severity: 'recommended',
    gradeReason:
      'when stdout on failure is not {"error": ...} the agent falls back to the exit status ("exit status 1"): the user loses the message, nothing breaks',
    asks: 'the shared calls: 1 volume at the capacities given (created twice, deleted twice), a delete of a volume never created, an unknown operation, a create with an unknown parameter',
    needs: ['discovery.fingerprint-succeeds'],
    async run(ctx: CheckContext) {
      const failed = await failedRuns(ctx);
      const bad = failed.filter(
        (r) => outputText(r.run.stdout).trim() !== '' && decodeErrorOutput(r.run.stdout, r.run.argv[0]) === undefined,
      );
      if (bad.length > 0) {
        ctx.fail(bad.map((r) => `${r.label}: stdout was ${JSON.stringify(clip(outputText(r.run.stdout)))}`).join('; '));
      }
    },
  },
  {
    id: 'errors.failure-error-json',
    area: 'errors',
    title: 'On failure stdout holds {"error": "..."} with a message, which the agent shows to the user.',
    protocolRef: 'PROTOCOL.md § create',
    severity: 'recommended',
    gradeReason:
      'the message only reaches the user through {"error": ...}; without it they see "exit status 1", nothing breaks',
    asks: 'the shared calls: 1 volume at the capacities given (created twice, deleted twice), a delete of a volume never created, an unknown operation, a create with an unknown parameter',
    needs: ['discovery.fingerprint-succeeds'],
    async run(ctx: CheckContext) {
      const failed = await failedRuns(ctx);
      const silent = failed.filter((r) => decodeErrorOutput(r.run.stdout, r.run.argv[0]) === undefined);
      if (silent.length > 0)
        ctx.fail(
          `no {"error": ...} on stdout for: ${silent.map((r) => `${r.label} (${describeRun(r.run)})`).join('; ')}`,
        );
    },
  },
  {
    id: 'errors.stdout-only-json',
    area: 'errors',
    title:
      'A successful run writes nothing to stdout but its one JSON document (delete: that or nothing); logs go to stderr.',
    protocolRef: REF,
    severity: 'required',
    gradeReason:
      'anything on stdout besides the one JSON document fails fingerprint (the plugin is skipped) and create (the volume is refused); on delete stdout is ignored, so there it only warns',
    asks: 'the shared calls: 1 volume at the capacities given (created twice, deleted twice), a delete of a volume never created, an unknown operation, a create with an unknown parameter',
    needs: ['discovery.fingerprint-succeeds'],
    async run(ctx: CheckContext) {
      const ok = (await lifecycleRuns(ctx)).filter((r) => r.operation !== UNKNOWN_OPERATION && succeeded(r.run));
      const bad = ok.filter((r) => outputText(r.run.stdout).trim() !== '' && !parsePluginStdout(r.run.stdout).ok);
      const shown = (runs: typeof bad) =>
        runs.map((r) => `${r.label}: stdout was ${JSON.stringify(clip(outputText(r.run.stdout)))}`).join('; ');
      const breaking = bad.filter((r) => r.operation !== 'delete');
      if (breaking.length > 0) ctx.fail(shown(breaking));
      // The agent ignores stdout after a successful delete.
      if (bad.length > 0) ctx.warn(`${shown(bad)}; the agent ignores it after a delete, but logs belong on stderr`);
    },
  },
  {
    id: 'errors.no-stack-traces',
    area: 'errors',
    title: 'No stack trace ever reaches stdout, where the agent shows it to the user.',
    protocolRef: REF,
    severity: 'recommended',
    gradeReason:
      'a stack trace on stdout only changes what the user reads (and lands in logs): on success it is already caught by errors.stdout-only-json',
    asks: 'the shared calls: 1 volume at the capacities given (created twice, deleted twice), a delete of a volume never created, an unknown operation, a create with an unknown parameter',
    needs: ['discovery.fingerprint-succeeds'],
    async run(ctx: CheckContext) {
      const traced = (await lifecycleRuns(ctx)).filter(
        (r) =>
          looksLikeStackTrace(outputText(r.run.stdout)) || looksLikeStackTrace(decodeErrorOutput(r.run.stdout) ?? ''),
      );
      if (traced.length > 0)
        ctx.fail(`stack trace on stdout of: ${traced.map((r) => r.label).join(', ')}; write it to stderr`);
    },
  },
  {
    id: 'errors.failed-create-leaves-nothing',
    area: 'errors',
    title:
      'A create that fails part way leaves nothing behind: no file, loop device or mount (the agent never calls delete after a failed create).',
    protocolRef: 'PROTOCOL.md § create',
    severity: 'recommended',
    gradeReason:
      'the agent never calls delete after a failed create: what is left is a leak on the node, but no volume exists, so no data is lost and nothing under Nomad breaks',
    needs: ['environment.dhv-only'],
    asks: 'two creates that must fail, neither asking for any space: an unknown parameter, and a volumes dir whose parent is a file',
    async run(ctx: CheckContext) {
      // Failures a real agent produces without asking the plugin for anything: parameters the
      // user wrote in the volume spec, and a host_volumes_dir that cannot be made (Nomad never makes it).
      const blocker = join(ctx.sandbox, 'host-volumes-dir-blocked');
      await writeFile(blocker, 'a file where host_volumes_dir has to be a folder\n');
      const attempts = [
        { what: `an unknown parameter (${UNKNOWN_PARAMETER})`, request: refusableRequest(ctx) },
        {
          what: `a volumes dir (${ENV.volumesDir}) below a regular file`,
          request: ctx.newVolume({ volumesDir: join(blocker, 'volumes') }),
        },
      ];
      let refused = 0;
      for (const { what, request } of attempts) {
        ctx.cleanup(() => ctx.delete(ctx.deleteRequest(request, '')));
        const before = await listTree(ctx.sandbox);
        const run = await ctx.runAsAgent('create', request);
        if (succeeded(run)) {
          ctx.note(`accepted ${what}`);
          continue;
        }
        refused++;
        const held = ctx.leftovers.filter((l) => l.volumeId === request.volumeId && l.kind !== 'folder');
        if (held.length > 0) ctx.fail(held.map((l) => l.message).join('; '));
        const left = added(before, await listTree(ctx.sandbox));
        if (left.length > 0)
          ctx.fail(`create with ${what} failed (${describeRun(run)}) but left behind: ${left.slice(0, 5).join(', ')}`);
      }
      if (refused === 0)
        ctx.skip('could not make create fail: it accepted an unknown parameter and a volumes dir below a regular file');
    },
  },
];

/** The shared calls that failed by the plugin's own answer (not killed, not unstartable); a skip when none did. */
async function failedRuns(ctx: CheckContext): Promise<Awaited<ReturnType<typeof lifecycleRuns>>> {
  const failed = (await lifecycleRuns(ctx)).filter((r) => !succeeded(r.run) && !r.run.spawnError && !r.run.timedOut);
  if (failed.length === 0) ctx.skip('no run failed, so there was no failure output to judge');
  return failed;
}
