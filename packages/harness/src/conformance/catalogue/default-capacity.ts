/**
 * dhv check's default capacity is none (no capacity_min or capacity_max, as a volume spec
 * without them). A plugin that needs one (Nomad's demo mkfs plugin makes an empty image and
 * mkfs refuses it) is a legitimate plugin: when no capacity was given, one create without
 * one is tried before the checks, and when the plugin refuses it but takes FALLBACK_CAPACITY,
 * the run asks for that instead: create.path cannot judge the default, every other check and
 * the explorer judge the plugin at a capacity it makes.
 */

import { formatSize } from '@dhv/sdk';
import { PluginError } from '@dhv/sdk/client';
import { stderrBeyond } from '../raw-run.js';
import { capacityBound } from '../space-budget.js';
import type { Check, CheckContext, FallbackCapacity, SuiteSettings } from '../types.js';

/** What the run asks for where no capacity was given and the plugin refused none, never past the capacity bound. */
export const FALLBACK_CAPACITY = 64n * 1024n * 1024n;

/** The check whose verdict at the default capacity the fallback cannot give: the others need a working create, which the probe showed. */
const JUDGED_AT_THE_DEFAULT = 'create.path';

/** Whether the user gave no capacity at all: only then does dhv check choose one. */
export function noCapacityGiven(settings: SuiteSettings): boolean {
  return settings.capacityMin === 0n && settings.capacityMax === 0n && settings.capacityFloor === 0n;
}

/** The capacity_min the user gave: 0n when dhv check chose the one the creates ask for. */
export function givenCapacityMin(settings: SuiteSettings): bigint {
  return settings.fallbackCapacity === undefined ? settings.capacityMin : 0n;
}

/** The settings a run asks with, once the probe found the plugin refuses no capacity but takes `found`. */
export function withFallbackCapacity(settings: SuiteSettings, found: FallbackCapacity | undefined): SuiteSettings {
  return found === undefined ? settings : { ...settings, capacityMin: found.bytes, fallbackCapacity: found };
}

/** The checks as they run at the fallback capacity: none waits for create.path, whose default the plugin refused. */
export function withoutNeedOfDefault(checks: Check[]): Check[] {
  return checks.map((c) =>
    c.needs?.includes(JUDGED_AT_THE_DEFAULT)
      ? { ...c, needs: c.needs.filter((id) => id !== JUDGED_AT_THE_DEFAULT) }
      : c,
  );
}

/** Why create.path cannot judge the default capacity, and the flags that say what the plugin needs. */
export function defaultCapacityCannotJudge({ bytes, refused }: FallbackCapacity): string {
  const size = formatSize(bytes);
  return (
    `cannot judge at dhv check's default capacity (none, as in a volume spec without capacity_min): the plugin refused it (${refused}) but made a ${size} volume, ` +
    `so the run's creates that give no capacity asked for ${size} instead, this one too (its path is good). ` +
    'If the plugin needs a capacity, say so: --capacity-min SIZE judges this check at SIZE; --capacity-floor SIZE (its smallest volume) starts the sizes dhv check picks itself there'
  );
}

/**
 * Not a check of the catalogue: run once before them, on its own, when no capacity was
 * given. `found` is told the fallback capacity when a create without one was refused (the
 * plugin exited non-zero) and a create of FALLBACK_CAPACITY succeeded; anything else leaves
 * the run as it was, for the checks to judge.
 */
export function defaultCapacityProbe(found: (capacity: FallbackCapacity) => void): Check {
  return {
    id: 'create.default-capacity-probe',
    area: 'create',
    title: 'A create without a capacity, then one with dhv check’s fallback capacity when that is refused.',
    protocolRef: 'PROTOCOL.md § create',
    severity: 'recommended',
    gradeReason: 'not a verdict: it chooses the capacity the checks ask for',
    async run(ctx: CheckContext) {
      let refused: string;
      try {
        await ctx.provision(ctx.newVolume());
        return;
      } catch (err) {
        if (!(err instanceof PluginError) || err.code !== 'PLUGIN_FAILED') return;
        const said = stderrBeyond(err.stderr, err.nomadMessage);
        refused = said ? `${err.nomadMessage}; the plugin's stderr ended: ${said}` : err.nomadMessage;
      }
      const bound = capacityBound(ctx.settings);
      const bytes = FALLBACK_CAPACITY < bound ? FALLBACK_CAPACITY : bound;
      try {
        await ctx.provision(ctx.newVolume({ capacityMinBytes: bytes }));
      } catch {
        return;
      }
      found({ bytes, refused });
    },
  };
}
