import { formatSize } from '@dhv/sdk';
import { AGENT_RESTORE_DEADLINE_MS, AGENT_TIMEOUT_MS } from '@dhv/sdk/plugin';
import { AGENT_DEADLINES } from '../agent-deadlines.js';

/** One create of a new volume that succeeded: the capacity it made and how long it took. */
export interface CreateTime {
  capacityBytes: bigint;
  durationMs: number;
}

const GiB = 1024 ** 3;
/**
 * The largest capacity's median must be this much above the smallest's, and by this many
 * ms, to count as a time per byte: below that a busy host's noise can make it up.
 */
const LEAST_GROWTH = 1.2;
const LEAST_GROWTH_MS = 50;
/** Creates at each of the smallest and largest capacity: one of each is a busy host's whim. */
const LEAST_CREATES = 2;

export type CreateSpeed =
  | { measured: true; msPerGiB: number; reachedFrom: (deadlineMs: number) => bigint }
  /** `slowest`: from one capacity, the time per byte were all of it spent on bytes: no volume smaller than it reaches gets there sooner. */
  | { measured: false; why: string; slowest?: { msPerGiB: number; reachedFrom: (deadlineMs: number) => bigint } };

/**
 * How a plugin's create time grows with the capacity it makes: a straight line through the
 * median time at each capacity it was asked for. Measured only when the largest capacity's
 * median is clearly above the smallest's; otherwise the times say nothing of bytes (a plugin
 * whose create takes milliseconds whatever the size).
 */
export function createSpeed(times: readonly CreateTime[]): CreateSpeed {
  const groups = new Map<bigint, number[]>();
  for (const t of times) groups.set(t.capacityBytes, [...(groups.get(t.capacityBytes) ?? []), t.durationMs]);
  const points = [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([capacity, ms]) => ({ capacity, ms, median: median(ms) }));
  const seen = points.map((p) => `${Math.round(p.median)} ms at ${formatSize(p.capacity)}`).join(', ');
  const small = points[0];
  const large = points[points.length - 1];
  if (small === undefined || large === undefined)
    return { measured: false, why: 'no create of a new volume answered in this run' };
  // A bound, when nothing better: at the largest capacity, the time per byte were all of it spent on bytes.
  const unmeasured = (why: string): CreateSpeed => {
    if (large.capacity === 0n || large.median <= 0) return { measured: false, why };
    const { capacity, median: ms } = large;
    return {
      measured: false,
      why,
      slowest: {
        msPerGiB: (ms / Number(capacity)) * GiB,
        reachedFrom: (deadlineMs) => BigInt(Math.round((Number(capacity) * deadlineMs) / ms)),
      },
    };
  };
  if (points.length < 2)
    return unmeasured(
      `all of its ${times.length} creates in this run had one capacity (${seen}), so no time per byte shows`,
    );
  if (small.ms.length < LEAST_CREATES || large.ms.length < LEAST_CREATES)
    return unmeasured(
      `it made too few volumes of the smallest and the largest capacity in this run (${seen}) to tell a time per byte from a busy host's noise`,
    );
  const { slope, intercept } = line(points.map((p) => ({ x: Number(p.capacity), y: p.median })));
  const grew = large.median - small.median;
  if (grew < LEAST_GROWTH_MS || large.median < small.median * LEAST_GROWTH || !(slope > 0))
    return unmeasured(
      `its creates in this run took about as long whatever their capacity (${seen}), so no time per byte shows`,
    );
  return {
    measured: true,
    msPerGiB: slope * GiB,
    reachedFrom: (deadlineMs) => BigInt(Math.max(0, Math.round((deadlineMs - intercept) / slope))),
  };
}

/**
 * When the agent meets a defect a killed create exposes: its deadlines, and from the
 * plugin's own creates in this run, which volumes reach them.
 */
export function deadlineWords(times: readonly CreateTime[]): string {
  const speed = createSpeed(times);
  const deadlines = `the agent kills creates at their deadline: ${AGENT_DEADLINES}`;
  const seconds = (msPerGiB: number) =>
    msPerGiB >= 10_000 ? Math.round(msPerGiB / 1000).toString() : (msPerGiB / 1000).toPrecision(2);
  const over = (reachedFrom: (ms: number) => bigint) =>
    `${formatSize(reachedFrom(AGENT_TIMEOUT_MS.create))} meet this at any create, and over about ${formatSize(reachedFrom(AGENT_RESTORE_DEADLINE_MS))} at a restore`;
  if (speed.measured)
    return `${deadlines}. This create takes about ${seconds(speed.msPerGiB)} s per GiB (measured on its ${times.length} creates in this run), so volumes over about ${over(speed.reachedFrom)}`;
  const plain = `${deadlines}. How long this plugin's create takes per byte cannot be measured: ${speed.why}`;
  if (speed.slowest === undefined)
    return `${plain}; the agent meets this whenever a create outlasts its deadline (a larger volume than these, a slow or busy disk)`;
  return `${plain}. At most it takes ${seconds(speed.slowest.msPerGiB)} s per GiB (were all of its time spent on bytes): only volumes over about ${over(speed.slowest.reachedFrom)}, unless the disk is slower than in this run`;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The least-squares line through the points. */
function line(points: readonly { x: number; y: number }[]): { slope: number; intercept: number } {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  const slope = sxy / sxx;
  return { slope, intercept: my - slope * mx };
}
