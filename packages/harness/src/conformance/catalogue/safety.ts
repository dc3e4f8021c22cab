import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { formatSize, isStrictlyInside } from '@dhv/sdk';
import { ENV } from '@dhv/sdk/plugin';
import { readCreatedPath } from '../inspect.js';
import { succeeded } from '../raw-run.js';
import type { Check, CheckContext } from '../types.js';
import { NEEDS_WORKING_CREATE } from './needs-working-create.js';
import { added, listTree } from './volume-files.js';
import { SPACE_SLACK_BYTES, SPACE_WITHIN_BOUND, capacityBound, sizeWords, spaceTaken } from '../space-budget.js';

export const safetyChecks: Check[] = [
  {
    id: SPACE_WITHIN_BOUND,
    area: 'safety',
    title: `While any call runs, the plugin takes no more space in the sandbox than the capacities it was asked for plus ${formatSize(SPACE_SLACK_BYTES)}.`,
    protocolRef: 'PROTOCOL.md § create (DHV_CAPACITY_MIN_BYTES, DHV_CAPACITY_MAX_BYTES)',
    severity: 'required',
    gradeReason:
      "a plugin that writes past what it was asked for fills the node's disk: the workloads on it, and the agent's own state, fail",
    asks: 'one volume at the capacities given; every call of every check is watched the same way',
    needs: NEEDS_WORKING_CREATE,
    async run(ctx: CheckContext) {
      const request = ctx.newVolume();
      await ctx.provision(request);
      // The watch itself fails the check past the bound; here only what was taken is told.
      const taken = spaceTaken(ctx.sandbox);
      const [min, max] = [BigInt(request.capacityMinBytes ?? 0), BigInt(request.capacityMaxBytes ?? 0)];
      const allowed = max > 0n ? max : min > 0n ? min : capacityBound(ctx.settings);
      ctx.note(`took ${sizeWords(taken.bytes)} for a volume allowed ${sizeWords(allowed)}`);
    },
  },
  {
    id: 'safety.name-traversal',
    area: 'safety',
    title: 'A volume name containing "../" or "/" creates nothing outside the volumes dir.',
    protocolRef: `PROTOCOL.md § Environment variables (${ENV.volumeName} is user controlled)`,
    severity: 'required',
    gradeReason:
      'DHV_VOLUME_NAME is user controlled: a path made from it can write, and on delete remove, anything outside the volumes dir',
    asks: '5 volumes at once at the capacities given, named with ../ and /',
    needs: NEEDS_WORKING_CREATE,
    async run(ctx: CheckContext) {
      // The volumes dir sits three levels down in the check's own sandbox, so names that
      // climb up to three levels land where they can be seen.
      const volumesDir = join(ctx.sandbox, 'a', 'b', 'volumes');
      await mkdir(volumesDir, { recursive: true });
      const tag = ctx.newVolume().volumeId.slice(0, 8);
      const names = [
        `../escape-${tag}`,
        `../../escape2-${tag}`,
        `x/../../../../escape3-${tag}`,
        join(ctx.sandbox, `absolute-${tag}`),
        `nested/${tag}`,
      ];
      const before = await listTree(ctx.sandbox, [volumesDir]);
      const escaped: string[] = [];
      const requests = names.map((volumeName) => ctx.newVolume({ volumeName, volumesDir }));
      const createdPaths = new Map<string, string>();
      ctx.cleanup(() =>
        Promise.allSettled(requests.map((r) => ctx.delete(ctx.deleteRequest(r, createdPaths.get(r.volumeId) ?? '')))),
      );
      // Different volumes, so the agent may run these at once; doing so keeps the suite fast.
      await Promise.all(
        requests.map(async (request) => {
          const run = await ctx.runAsAgent('create', request);
          const path = readCreatedPath(run.stdout);
          if (!succeeded(run) || !path.ok) return;
          createdPaths.set(request.volumeId, path.value);
          if (!isStrictlyInside(volumesDir, path.value))
            escaped.push(`name ${JSON.stringify(request.volumeName)} gave path ${path.value}`);
        }),
      );
      const outside = added(before, await listTree(ctx.sandbox, [volumesDir]));
      if (outside.length > 0) escaped.push(`created outside the volumes dir: ${outside.slice(0, 5).join(', ')}`);
      if (escaped.length > 0) ctx.fail(`${escaped.join('; ')}; derive paths from the volume ID, not the name`);
    },
  },
  {
    id: 'safety.not-world-writable',
    area: 'safety',
    title: 'The created directory is not world-writable unless the parameters ask for it.',
    protocolRef: 'PROTOCOL.md § The built-in mkdir plugin (mode defaults to 0700)',
    severity: 'recommended',
    gradeReason:
      'a world-writable volume works under Nomad; it is a hardening matter, and the parameters may ask for it',
    asks: '1 volume at the capacities given',
    needs: NEEDS_WORKING_CREATE,
    async run(ctx: CheckContext) {
      if (ctx.settings.parameters && 'mode' in ctx.settings.parameters) ctx.skip('the parameters choose the mode');
      const created = await ctx.provision(ctx.newVolume());
      const mode = (await stat(created.path)).mode & 0o7777;
      ctx.note(`mode ${mode.toString(8).padStart(4, '0')}`);
      if ((mode & 0o002) !== 0)
        ctx.fail(`${created.path} has mode ${mode.toString(8)}: any user on the host can write to it`);
    },
  },
];
