/** The create checks about capacity: the bytes reported against what was asked, and a create asked for more. */

import { formatSize } from '@dhv/sdk';
import { PluginError, decodeErrorOutput, outputText, type CreateResult } from '@dhv/sdk/client';
import { readCreatedBytes, readCreatedPath } from '../inspect.js';
import { clip, describeRun, succeeded } from '../raw-run.js';
import type { Check, CheckContext, CreateInput } from '../types.js';
import { markerProblem, writeMarker } from './volume-files.js';
import { DEFAULT_CAPACITY_BOUND, capacityBound } from '../space-budget.js';
import { NEEDS_WORKING_CREATE } from './needs-working-create.js';

const REF = 'PROTOCOL.md § create';
/** Used by create.bytes-within-capacity when the user gave no capacities. */
const DEFAULT_RANGE = { min: 16n * 1024n * 1024n, max: 64n * 1024n * 1024n };
const MiB = 1024n * 1024n;
/** create.expands without configured sizes: a 16 MiB volume asked to grow to 32 MiB. */
const EXPANDS_FROM = 16n * MiB;

/**
 * The same volume asked for again with a larger capacity_min (the configured expansion
 * size, else twice the old one, or 16 MiB more than it has), never past the capacity
 * bound; the check is skipped when the bound leaves no room for a larger one.
 */
function largerRequest(ctx: CheckContext, request: CreateInput, bytes: bigint): CreateInput {
  const { expansionSize } = ctx.settings;
  const bound = capacityBound(ctx.settings);
  const baseMin = BigInt(request.capacityMinBytes ?? 0);
  const baseMax = BigInt(request.capacityMaxBytes ?? 0);
  const wanted =
    expansionSize > 0n ? expansionSize : baseMin > 0n ? baseMin * 2n : bytes > 0n ? bytes + 16n * MiB : 32n * MiB;
  const largerMin = wanted < bound ? wanted : bound;
  if (largerMin <= baseMin || (bytes > 0n && largerMin <= bytes))
    ctx.skip(
      `no larger capacity_min fits within dhv check's capacity bound of ${formatSize(bound)} (--capacity-max, else ${formatSize(DEFAULT_CAPACITY_BOUND)}): raise --capacity-max above ${formatSize(baseMin > bytes ? baseMin : bytes)}`,
    );
  return {
    ...request,
    capacityMinBytes: largerMin,
    capacityMaxBytes: baseMax > 0n && baseMax < largerMin ? largerMin : baseMax,
  };
}

/**
 * Creates a volume at sizes dhv check chose; a refusal (the plugin exited non-zero, as it
 * should for sizes it cannot make: xfs needs 300 MiB) is not the plugin's fault, so the
 * check cannot judge it and says which flags ask for sizes it makes.
 */
async function provisionOrCannotJudge(ctx: CheckContext, request: CreateInput, sizes: string): Promise<CreateResult> {
  try {
    return await ctx.provision(request);
  } catch (err) {
    if (!(err instanceof PluginError) || err.code !== 'PLUGIN_FAILED') throw err;
    ctx.skip(
      `cannot judge: the plugin refused ${sizes} (${err.nomadMessage}); ` +
        'if it needs other sizes, give dhv check capacities it makes: --capacity-min SIZE --capacity-max SIZE',
    );
  }
}

export const bytesWithinCapacity: Check = {
  id: 'create.bytes-within-capacity',
  area: 'create',
  title: 'A plugin that reports capacity reports "bytes" within [capacity_min, capacity_max].',
  protocolRef: REF,
  severity: 'recommended',
  gradeReason:
    'the agent records whatever "bytes" says and checks nothing against the capacities; a wrong figure misleads users but breaks nothing',
  asks: '1 volume at the capacities given, else capacity_min 16 MiB and capacity_max 64 MiB',
  needs: NEEDS_WORKING_CREATE,
  async run(ctx: CheckContext) {
    const given = ctx.settings.capacityMin > 0n || ctx.settings.capacityMax > 0n;
    const min = given ? ctx.settings.capacityMin : DEFAULT_RANGE.min;
    const max = given ? ctx.settings.capacityMax : DEFAULT_RANGE.max;
    const range = `[${min > 0n ? formatSize(min) : 'unset'}, ${max > 0n ? formatSize(max) : 'unset'}]`;
    const result = await provisionOrCannotJudge(
      ctx,
      ctx.newVolume({ capacityMinBytes: min, capacityMaxBytes: max }),
      `the capacities ${range}${given ? '' : ", dhv check's default range"}`,
    );
    if (result.bytes === 0n) ctx.skip('the plugin reports 0 bytes: it does not claim to enforce capacity');
    if (min > 0n && result.bytes < min)
      ctx.fail(`reported ${result.bytes} bytes (${formatSize(result.bytes)}), less than capacity_min of ${range}`);
    if (max > 0n && result.bytes > max)
      ctx.fail(`reported ${result.bytes} bytes (${formatSize(result.bytes)}), more than capacity_max of ${range}`);
    ctx.note(`asked for ${range}, got ${formatSize(result.bytes)}`);
  },
};

export const largerCapacity: Check = {
  id: 'create.larger-capacity',
  area: 'create',
  title:
    'A repeated create with a larger capacity_min either expands the volume or is refused cleanly, keeping the volume and its data.',
  protocolRef: REF,
  severity: 'required',
  gradeReason:
    'an update re-runs create with a larger capacity_min on a volume holding data: moving or wiping the volume loses that data (the shape of a refusal is only recommended)',
  asks: '1 volume at the capacities given, then again with a larger capacity_min (--expansion-size, else twice capacity_min or 16 MiB more than it reports), never past the capacity bound',
  needs: [...NEEDS_WORKING_CREATE, 'create.idempotent'],
  async run(ctx: CheckContext) {
    const request = ctx.newVolume();
    const first = await ctx.provision(request);
    const marker = await writeMarker(ctx, first.path);
    const larger = largerRequest(ctx, request, first.bytes);
    const largerMin = BigInt(larger.capacityMinBytes ?? 0);
    const run = await ctx.runAsAgent('create', larger);
    if (succeeded(run)) {
      const path = readCreatedPath(run.stdout);
      if (!path.ok) ctx.fail(`the larger create succeeded but ${path.problem}`);
      if (path.value !== first.path) ctx.fail(`the larger create moved the volume from ${first.path} to ${path.value}`);
      const bytes = readCreatedBytes(run.stdout);
      ctx.note(
        `accepted capacity_min ${formatSize(largerMin)}; reports ${bytes.ok ? formatSize(bytes.value) : 'no valid bytes'}`,
      );
    } else {
      if (run.timedOut || run.spawnError) ctx.fail(`the larger create did not finish: ${describeRun(run)}`);
      const message = decodeErrorOutput(run.stdout, 'create');
      // Only the refusal's message is lost: the agent falls back to the exit status.
      if (outputText(run.stdout).trim() !== '' && message === undefined) {
        ctx.warn(
          `the larger create was refused, but stdout is not an {"error": ...} document: ${JSON.stringify(clip(outputText(run.stdout)))}`,
        );
      }
      const lost = await markerProblem(first.path, marker);
      if (lost) ctx.fail(`after the larger create, ${lost}`);
      if (ctx.settings.supports.includes('expansion'))
        ctx.fail(
          `the plugin declares expansion (--supports expansion) but refused a larger capacity_min (${formatSize(largerMin)}): ${message ?? describeRun(run)}; an update that grows one of its volumes fails the same way`,
        );
      ctx.note(`refused: ${message ?? describeRun(run)}`);
    }
    const lost = await markerProblem(first.path, marker);
    if (lost) ctx.fail(`after the larger create, ${lost}`);
  },
};

export const expands: Check = {
  id: 'create.expands',
  area: 'create',
  title:
    'A plugin that reports capacity and accepts a larger capacity_min on a repeat create reports at least that much afterwards.',
  protocolRef: REF,
  severity: 'recommended',
  gradeReason:
    'the agent records the reported bytes without checking them against capacity_min; a short figure misleads users but breaks nothing',
  asks: '1 volume at the capacities given, then again with a larger capacity_min (as create.larger-capacity)',
  needs: [...NEEDS_WORKING_CREATE, 'create.larger-capacity'],
  async run(ctx: CheckContext) {
    // Unless sizes are given, both creates are bounded (capacity_max = capacity_min): a plugin
    // reporting its filesystem's free space is judged on the cap it applies, not on a figure
    // other processes move between the two creates.
    const { capacityMin, capacityMax, expansionSize } = ctx.settings;
    const bounded = capacityMin === 0n && capacityMax === 0n && expansionSize === 0n;
    const request = bounded
      ? ctx.newVolume({ capacityMinBytes: EXPANDS_FROM, capacityMaxBytes: EXPANDS_FROM })
      : ctx.newVolume();
    const first = bounded
      ? await provisionOrCannotJudge(ctx, request, `dhv check's default ${formatSize(EXPANDS_FROM)} volume`)
      : await ctx.provision(request);
    if (first.bytes === 0n)
      ctx.skip('the plugin reports 0 bytes: it does not claim capacity, so there is nothing to expand');
    const larger = bounded
      ? { ...request, capacityMinBytes: 2n * EXPANDS_FROM, capacityMaxBytes: 2n * EXPANDS_FROM }
      : largerRequest(ctx, request, first.bytes);
    const wanted = BigInt(larger.capacityMinBytes ?? 0);
    let again: CreateResult;
    try {
      again = await ctx.create(larger);
    } catch (err) {
      if (ctx.settings.supports.includes('expansion'))
        ctx.fail(
          `the plugin declares expansion (--supports expansion) but refused a larger capacity_min (${formatSize(wanted)}): ${(err as Error).message}`,
        );
      ctx.skip(
        `the plugin refuses a larger capacity_min (it does not claim expansion; --supports expansion says it does): ${(err as Error).message}`,
      );
    }
    if (again.bytes < wanted) {
      ctx.fail(
        `accepted capacity_min ${wanted} bytes (${formatSize(wanted)}) but reports ${again.bytes} bytes (${formatSize(again.bytes)}): the agent records less than was asked for`,
      );
    }
    ctx.note(`${formatSize(first.bytes)} → ${formatSize(again.bytes)}`);
  },
};
