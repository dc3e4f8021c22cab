import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeErrorOutput } from '@dhv/sdk/client';
import { ENV } from '@dhv/sdk/plugin';
import { describeRun, succeeded } from '../raw-run.js';
import type { Check, CheckContext } from '../types.js';
import { NEEDS_WORKING_CREATE } from './create.js';
import { added, exists, listTree } from './volume-files.js';

const REF = 'PROTOCOL.md § delete';

export const deleteChecks: Check[] = [
  {
    id: 'delete.removes-path',
    area: 'delete',
    title: 'delete removes the path that create returned.',
    protocolRef: REF,
    severity: 'required',
    needs: NEEDS_WORKING_CREATE,
    async run(ctx: CheckContext) {
      const request = ctx.newVolume();
      const created = await ctx.provision(request);
      await ctx.delete(ctx.deleteRequest(request, created.path));
      if (await exists(created.path)) ctx.fail(`delete succeeded but ${created.path} still exists`);
    },
  },
  {
    id: 'delete.idempotent',
    area: 'delete',
    title: 'Deleting the same volume twice in a row succeeds both times.',
    protocolRef: REF,
    severity: 'required',
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
    severity: 'required',
    needs: NEEDS_WORKING_CREATE,
    async run(ctx: CheckContext) {
      const request = ctx.newVolume();
      const created = await ctx.provision(request);
      const movedVolumesDir = join(ctx.sandbox, 'volumes-moved');
      await mkdir(movedVolumesDir);
      const run = await ctx.runAsAgent('delete', { ...ctx.deleteRequest(request, created.path), volumesDir: movedVolumesDir });
      const stillThere = await exists(created.path);
      if (succeeded(run) && stillThere) {
        ctx.fail(
          `delete with ${ENV.createdPath}=${created.path} (and another ${ENV.volumesDir}) reported success but left that path in place: it does not use ${ENV.createdPath}`,
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
    severity: 'required',
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
      if (files.length > 0) ctx.warn(`new files in the volumes dir after delete (shared state?): ${files.slice(0, 5).join(', ')}`);
    },
  },
];
