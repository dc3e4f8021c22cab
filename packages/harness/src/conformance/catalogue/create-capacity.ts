/** The create checks about capacity: the bytes reported against what was asked, and a create asked for more. */

import { formatSize } from '@dhv/sdk';
import { PluginError, decodeErrorOutput, outputText, type CreateResult } from '@dhv/sdk/client';
import { readCreatedBytes, readCreatedPath } from '../inspect.js';
import { clip, describeRun, succeeded } from '../raw-run.js';
import type { Check, CheckContext, CreateInput } from '../types.js';
import { markerProblem, writeMarker } from './volume-files.js';
import { DEFAULT_CAPACITY_BOUND, capacityBound } from '../space-budget.js';
import { NEEDS_WORKING_CREATE } from './needs-working-create.js';
import { givenCapacityMin } from './default-capacity.js';

const REF = 'PROTOCOL.md § create';
const MiB = 1024n * 1024n;
/** The sizes dhv check asks for when the user gave none: [16 MiB, 64 MiB] for create.bytes-within-capacity, 16 then 32 MiB for create.expands. */
const DEFAULT_RANGE = { min: 16n * MiB, max: 64n * MiB };

/**
 * The sizes dhv check chooses itself, above the plugin's declared floor (`--capacity-floor`):
 * [floor, twice it] and a growth from the floor to twice it, never past the capacity bound.
 */
function ownSizes(ctx: CheckContext): { min: bigint; max: bigint; growTo: bigint } {
  const floor =
    ctx.settings.capacityFloor > 0n ? ctx.settings.capacityFloor : (ctx.settings.fallbackCapacity?.bytes ?? 0n);
  const bound = capacityBound(ctx.settings);
  const min = floor > DEFAULT_RANGE.min ? floor : DEFAULT_RANGE.min;
  const wantedMax = floor > 0n && 2n * floor > DEFAULT_RANGE.max ? 2n * floor : DEFAULT_RANGE.max;
  const max = wantedMax < bound ? wantedMax : bound;
  const growTo = 2n * min < bound ? 2n * min : bound;
  return { min, max: max < min ? min : max, growTo };
}

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

/** Why the plugin should have made the sizes asked for, from what the user declared; undefined when dhv check chose them alone. */
function declaredSizes(ctx: CheckContext, chosenByDhv: boolean): string | undefined {
  const { capacityMin, capacityMax, capacityFloor } = ctx.settings;
  if (!chosenByDhv)
    return `they are the capacities given (--capacity-min ${formatSize(capacityMin)}, --capacity-max ${capacityMax > 0n ? formatSize(capacityMax) : 'unset'})`;
  if (capacityFloor > 0n) return `it declares it makes volumes from ${formatSize(capacityFloor)} (--capacity-floor)`;
  return undefined;
}

/** The declared parameters as the flags that gave them: `--param fs=xfs --param mode=0750`. */
export function declaredParameters(ctx: CheckContext): string | undefined {
  const given = Object.entries(ctx.settings.parameters ?? {});
  return given.length === 0 ? undefined : given.map(([k, v]) => `--param ${k}=${v}`).join(' ');
}

/**
 * Creates a volume at `sizes`. A refusal of what the user declared (capacities, a floor, the
 * parameters) fails. A refusal of sizes dhv check chose alone is not the plugin's fault (xfs
 * needs 300 MiB): when a create at the declared capacities and parameters succeeds, the check
 * cannot judge it and says which flags to pass; when that fails too, the declaration is what
 * the plugin refuses, and the check fails.
 */
async function provisionOrCannotJudge(
  ctx: CheckContext,
  request: CreateInput,
  sizes: string,
  chosenByDhv: boolean,
): Promise<CreateResult> {
  const refusal = (err: unknown) => {
    if (!(err instanceof PluginError) || err.code !== 'PLUGIN_FAILED') throw err;
    return err.nomadMessage;
  };
  let refused: string;
  try {
    return await ctx.provision(request);
  } catch (err) {
    refused = refusal(err);
  }
  const declared = declaredSizes(ctx, chosenByDhv);
  if (declared !== undefined) ctx.fail(`the plugin refused ${sizes}, though ${declared}: ${refused}`);
  try {
    await ctx.provision(ctx.newVolume());
  } catch (err) {
    const params = declaredParameters(ctx);
    ctx.fail(
      `the plugin refused ${sizes} (${refused}), and a create at the capacities given${params ? ` with the parameters it declares (${params})` : ''} too: ${refusal(err)}`,
    );
  }
  ctx.skip(
    `cannot judge: the plugin refused ${sizes} (${refused}); ` +
      'if it makes no volume that small, declare its smallest: --capacity-floor SIZE (or ask for sizes it makes: --capacity-min SIZE --capacity-max SIZE)',
  );
}

export const bytesWithinCapacity: Check = {
  id: 'create.bytes-within-capacity',
  area: 'create',
  title: 'A plugin that reports capacity reports "bytes" within [capacity_min, capacity_max].',
  protocolRef: REF,
  severity: 'recommended',
  gradeReason:
    'the agent records whatever "bytes" says and checks nothing against the capacities; a wrong figure misleads users but breaks nothing',
  asks: '1 volume at the capacities given, else capacity_min 16 MiB and capacity_max 64 MiB (with --capacity-floor F: capacity_min F, capacity_max twice F)',
  needs: NEEDS_WORKING_CREATE,
  async run(ctx: CheckContext) {
    const given = givenCapacityMin(ctx.settings) > 0n || ctx.settings.capacityMax > 0n;
    const own = ownSizes(ctx);
    const min = given ? ctx.settings.capacityMin : own.min;
    const max = given ? ctx.settings.capacityMax : own.max;
    const range = `[${min > 0n ? formatSize(min) : 'unset'}, ${max > 0n ? formatSize(max) : 'unset'}]`;
    const result = await provisionOrCannotJudge(
      ctx,
      ctx.newVolume({ capacityMinBytes: min, capacityMaxBytes: max }),
      given ? `the capacities ${range}` : `the capacities ${range}, dhv check's own range`,
      !given,
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
  asks: '1 volume at the capacities given, then again with a larger capacity_min (as create.larger-capacity); with no sizes given, 16 MiB (or --capacity-floor) then twice that, capacity_max equal to capacity_min',
  needs: [...NEEDS_WORKING_CREATE, 'create.larger-capacity'],
  async run(ctx: CheckContext) {
    // Unless sizes are given, both creates are bounded (capacity_max = capacity_min): a plugin
    // reporting its filesystem's free space is judged on the cap it applies, not on a figure
    // other processes move between the two creates.
    const { capacityMax, expansionSize } = ctx.settings;
    const bounded = givenCapacityMin(ctx.settings) === 0n && capacityMax === 0n && expansionSize === 0n;
    const own = ownSizes(ctx);
    const request = bounded ? ctx.newVolume({ capacityMinBytes: own.min, capacityMaxBytes: own.min }) : ctx.newVolume();
    const first = bounded
      ? await provisionOrCannotJudge(ctx, request, `dhv check's own ${formatSize(own.min)} volume`, true)
      : await ctx.provision(request);
    if (first.bytes === 0n)
      ctx.skip('the plugin reports 0 bytes: it does not claim capacity, so there is nothing to expand');
    if (bounded && own.growTo <= own.min)
      ctx.skip(
        `no larger capacity_min fits within dhv check's capacity bound of ${formatSize(capacityBound(ctx.settings))}: raise --capacity-max above ${formatSize(own.min)}`,
      );
    const larger = bounded
      ? { ...request, capacityMinBytes: own.growTo, capacityMaxBytes: own.growTo }
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
