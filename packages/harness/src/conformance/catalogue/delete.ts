import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { cleanupDeleteRequest, decodeErrorOutput } from '@dhv/sdk/client';
import { ENV } from '@dhv/sdk/plugin';
import { describeRun, succeeded } from '../raw-run.js';
import type { Check, CheckContext } from '../types.js';
import { NEEDS_WORKING_CREATE } from './needs-working-create.js';
import { added, exists, listTree, watchSurvivors, writeMarker } from './volume-files.js';
import type { CreateInput } from '../types.js';

const REF = 'PROTOCOL.md § delete';
const CLEANUP_REF = 'PROTOCOL.md § create (The cleanup delete)';
/**
 * What a delete should remove, in the words both delete.cleanup-call and
 * delete.uses-created-path accept: following it passes both.
 */
const CLEANUP_HINT = `remove ${ENV.createdPath}, except when it equals ${ENV.volumesDir} (the agent's cleanup delete): then remove ${ENV.volumesDir}/${ENV.volumeId}`;
/** How many volumes delete.others-untouched creates; the middle one is deleted. */
const OTHERS = 3;

/** Creates `count` volumes, cleanup registered first, each holding a marker file. */
async function volumesWithData(
  ctx: CheckContext,
  count: number,
): Promise<Array<{ request: CreateInput; path: string }>> {
  const made: Array<{ request: CreateInput; path: string }> = [];
  for (let i = 0; i < count; i++) {
    const request = ctx.newVolume();
    const { path } = await ctx.provision(request);
    await writeMarker(ctx, path);
    made.push({ request, path });
  }
  return made;
}

export const deleteChecks: Check[] = [
  {
    id: 'delete.removes-path',
    area: 'delete',
    title: 'delete removes the path that create returned.',
    protocolRef: REF,
    severity: 'required',
    gradeReason:
      'after a successful delete the agent and the servers forget the volume: what the plugin left is data the user asked to destroy, which nothing will ever remove',
    asks: '1 volume at the capacities given',
    needs: NEEDS_WORKING_CREATE,
    async run(ctx: CheckContext) {
      const request = ctx.newVolume();
      const created = await ctx.provision(request);
      await ctx.delete(ctx.deleteRequest(request, created.path));
      if (await exists(created.path)) ctx.fail(`delete succeeded but ${created.path} still exists`);
    },
  },
  {
    id: 'delete.releases-host-resources',
    area: 'delete',
    title:
      'A successful delete releases what the volume held on the host: no loop device backed by its files and no mount of it (at or below its path, or named after it) is left.',
    protocolRef: REF,
    severity: 'required',
    gradeReason:
      "after a successful delete nothing on the node releases them: a leaked loop device keeps its deleted image's space, and the node runs out of loop devices after a few hundred deletes; a leaked mount keeps the filesystem and its device busy for good",
    asks: '1 volume at the capacities given',
    needs: NEEDS_WORKING_CREATE,
    async run(ctx: CheckContext) {
      const request = ctx.newVolume();
      const created = await ctx.provision(request);
      await ctx.delete(ctx.deleteRequest(request, created.path));
      const leaked = ctx.leftovers.filter(
        (l) => l.volumeId === request.volumeId && l.after === 'delete' && l.kind !== 'folder',
      );
      if (leaked.length > 0) ctx.fail(leaked.map((l) => l.message).join('; '));
      ctx.note(
        `looked at once after the delete: no mount at or below ${created.path}, no loop device backed by a file below it, named after the volume, or mounted there before`,
      );
    },
  },
  {
    id: 'delete.idempotent',
    area: 'delete',
    title: 'Deleting the same volume twice in a row succeeds both times.',
    protocolRef: REF,
    severity: 'required',
    gradeReason:
      'a failed client-state delete makes the next delete run the plugin again on a volume it already removed: failing it leaves the volume stuck',
    asks: '1 volume at the capacities given, deleted twice',
    needs: NEEDS_WORKING_CREATE,
    async run(ctx: CheckContext) {
      const request = ctx.newVolume();
      const created = await ctx.provision(request);
      const del = ctx.deleteRequest(request, created.path);
      await ctx.delete(del);
      try {
        await ctx.delete(del);
      } catch (err) {
        ctx.fail(`the second delete failed: ${(err as Error).message}`);
      }
    },
  },
  {
    id: 'delete.never-created',
    area: 'delete',
    title: 'Deleting a volume that was never created succeeds.',
    protocolRef: REF,
    severity: 'required',
    gradeReason:
      "the agent runs the plugin's delete even for a volume the node never had; failing it makes the volume impossible to delete",
    asks: 'no space: the delete of a volume never created',
    needs: ['environment.dhv-only'],
    async run(ctx: CheckContext) {
      const request = ctx.newVolume();
      ctx.cleanup(() => ctx.delete(ctx.deleteRequest(request, '')));
      try {
        await ctx.delete(ctx.deleteRequest(request, ''));
      } catch (err) {
        ctx.fail(`delete of a volume that does not exist failed: ${(err as Error).message}`);
      }
    },
  },
  {
    id: 'delete.uses-created-path',
    area: 'delete',
    title: `delete acts on ${ENV.createdPath}: when the volumes dir changed since create, it removes that path or refuses, and never reports success while leaving it.`,
    protocolRef: REF,
    severity: 'recommended',
    gradeReason:
      "Nomad's own built-in mkdir ignores DHV_CREATED_PATH and removes <volumes dir>/<volume id>; either way is valid as long as no other volume is touched (delete.cleanup-call, delete.others-untouched)",
    asks: '1 volume at the capacities given',
    needs: NEEDS_WORKING_CREATE,
    async run(ctx: CheckContext) {
      const request = ctx.newVolume();
      const created = await ctx.provision(request);
      const movedVolumesDir = join(ctx.sandbox, 'volumes-moved');
      await mkdir(movedVolumesDir);
      const run = await ctx.runAsAgent('delete', {
        ...ctx.deleteRequest(request, created.path),
        volumesDir: movedVolumesDir,
      });
      const stillThere = await exists(created.path);
      if (succeeded(run) && stillThere) {
        ctx.fail(
          `delete with ${ENV.createdPath}=${created.path} (and another ${ENV.volumesDir}) reported success but left that path in place: it does not use ${ENV.createdPath}; ${CLEANUP_HINT}`,
        );
      }
      if (succeeded(run)) ctx.note(`removed ${ENV.createdPath}`);
      else ctx.note(`refused: ${decodeErrorOutput(run.stdout) ?? describeRun(run)}`);
    },
  },
  {
    id: 'delete.leaves-nothing',
    area: 'delete',
    title: 'After create and delete, nothing of the volume is left in the volumes dir.',
    protocolRef: REF,
    severity: 'recommended',
    gradeReason:
      "files left behind under the volume's name are a leak, not a failure: the volume and its data are gone (delete.removes-path) and nothing under Nomad breaks",
    asks: '1 volume at the capacities given',
    needs: NEEDS_WORKING_CREATE,
    async run(ctx: CheckContext) {
      const request = ctx.newVolume();
      const before = await listTree(ctx.volumesDir);
      const created = await ctx.provision(request);
      await ctx.delete(ctx.deleteRequest(request, created.path));
      const left = added(before, await listTree(ctx.volumesDir));
      const named = left.filter((p) => p.includes(request.volumeId) || p.includes(request.volumeName));
      if (named.length > 0) ctx.fail(`left behind in the volumes dir: ${named.join(', ')}`);
      // An empty directory a plugin keeps for all its volumes is harmless; files are not.
      const files = left.filter((p) => !p.endsWith('/'));
      if (files.length > 0)
        ctx.warn(`new files in the volumes dir after delete (shared state?): ${files.slice(0, 5).join(', ')}`);
    },
  },
  {
    id: 'delete.cleanup-call',
    area: 'delete',
    title: `The agent's cleanup delete (${ENV.createdPath} set to the volumes dir, ${ENV.volumeName} and ${ENV.namespace} empty) succeeds and touches nothing but that volume: the volumes dir and every other volume survive byte for byte.`,
    protocolRef: CLEANUP_REF,
    severity: 'required',
    gradeReason: `after an initial create whose saving to client state failed, a real agent runs exactly this delete: a plugin that removes ${ENV.createdPath} then wipes every volume on the node, and one that refuses it leaks the volume`,
    asks: '2 volumes at the capacities given',
    needs: NEEDS_WORKING_CREATE,
    async run(ctx: CheckContext) {
      const [doomed, ...kept] = await volumesWithData(ctx, 2);
      const survivors = await watchSurvivors(
        ctx.volumesDir,
        kept.map((k) => k.path),
        { volumeId: doomed!.request.volumeId, path: doomed!.path },
      );
      const run = await ctx.runAsAgent('delete', cleanupDeleteRequest(doomed!.request));
      const { broken, changed } = await survivors.compare();
      if (broken.length > 0)
        ctx.fail(
          `the cleanup delete destroyed what was not its volume: ${broken.slice(0, 4).join('; ')}; ${CLEANUP_HINT}`,
        );
      if (!succeeded(run))
        ctx.fail(`the cleanup delete failed (${describeRun(run)}): a real agent then leaks the volume it just created`);
      if (changed.length > 0)
        ctx.warn(`the cleanup delete changed files beside the volumes: ${changed.slice(0, 3).join('; ')}`);
      if (await exists(doomed!.path))
        ctx.warn(
          `the cleanup delete succeeded but left ${doomed!.path} in place: a real agent has forgotten it, so it leaks`,
        );
    },
  },
  {
    id: 'delete.others-untouched',
    area: 'delete',
    title: `A delete removes only its own volume: the other volumes in the volumes dir survive byte for byte.`,
    protocolRef: REF,
    severity: 'required',
    gradeReason: 'deleting one volume must not destroy the data of the others on the node',
    asks: '3 volumes at the capacities given',
    needs: NEEDS_WORKING_CREATE,
    async run(ctx: CheckContext) {
      const made = await volumesWithData(ctx, OTHERS);
      const doomed = made[1]!;
      const kept = made.filter((m) => m !== doomed);
      const survivors = await watchSurvivors(
        ctx.volumesDir,
        kept.map((k) => k.path),
        { volumeId: doomed.request.volumeId, path: doomed.path },
      );
      await ctx.delete(ctx.deleteRequest(doomed.request, doomed.path));
      const { broken, changed } = await survivors.compare();
      if (broken.length > 0)
        ctx.fail(`deleting ${doomed.path} destroyed what was not its volume: ${broken.slice(0, 4).join('; ')}`);
      if (changed.length > 0)
        ctx.warn(`the delete changed files beside the volumes: ${changed.slice(0, 3).join('; ')}`);
    },
  },
];
