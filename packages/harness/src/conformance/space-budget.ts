import { lstatSync, readdirSync, type BigIntStats } from 'node:fs';
import { join } from 'node:path';
import { formatSize } from '@dhv/sdk';
import { ENV } from '@dhv/sdk/plugin';
import type { SuiteSettings } from './types.js';

const MiB = 1024n * 1024n;

/** The most any capacity dhv check asks for when `--capacity-max` is not given. */
export const DEFAULT_CAPACITY_BOUND = 1024n * MiB;
/** What a sandbox may hold beyond its volumes' capacities: filesystem metadata, a plugin's own records, logs. */
export const SPACE_SLACK_BYTES = 64n * MiB;
/** How often the space a sandbox takes is measured while a plugin call runs in it. */
export const SPACE_POLL_MS = 100;
/** A measurement stops counting after this many entries (a plugin making millions of files is caught by its bytes first). */
const MAX_ENTRIES = 20_000;

/** The most dhv check asks a plugin for: `--capacity-max` when given, else DEFAULT_CAPACITY_BOUND. */
export function capacityBound(settings: Pick<SuiteSettings, 'capacityMax'>): bigint {
  return settings.capacityMax > 0n ? settings.capacityMax : DEFAULT_CAPACITY_BOUND;
}

/** `bytes` as a capacity: `64 MiB (67108864 bytes)`. */
export function sizeWords(bytes: bigint): string {
  return `${formatSize(bytes)} (${bytes} bytes)`;
}

/** A check asked a plugin for more than the bound: a defect of the check, never sent. */
export class CapacityPastBoundError extends Error {}

/** The capacities an environment asks for, when they are decimal integers (probes with junk ask for nothing). */
function askedCapacities(env: Record<string, string>): { min: bigint; max: bigint } | undefined {
  const read = (name: string) => {
    const value = env[name];
    return value !== undefined && /^\d{1,30}$/.test(value) ? BigInt(value) : undefined;
  };
  const min = read(ENV.capacityMinBytes);
  const max = read(ENV.capacityMaxBytes);
  if (min === undefined && max === undefined) return undefined;
  return { min: min ?? 0n, max: max ?? 0n };
}

/** Where the space went: the total, and the largest files, for the failure message. */
export interface SpaceTaken {
  bytes: bigint;
  largest: Array<{ path: string; bytes: bigint }>;
}

/**
 * The blocks allocated to every file in `dir` on `dir`'s own filesystem, as `du -x` counts
 * them: a loop-mounted volume counts through its image file, and a mount point inside is
 * not entered (what is written there is not the disk the sandbox is on).
 *
 * Synchronous: it runs after every plugin call and every SPACE_POLL_MS during one, and a
 * sandbox holds a few dozen entries (MAX_ENTRIES at most), so each call's own lstat costs
 * less than a round trip through libuv's threadpool would add to it (a wakeup of a worker
 * and of the event loop, per entry). Its recursion is as deep as the sandbox's folders,
 * which PATH_MAX bounds: a path past it cannot be lstat'd, and is not entered.
 */
export function spaceTaken(dir: string): SpaceTaken {
  const root = lstatOrNothing(dir);
  if (root === undefined) return { bytes: 0n, largest: [] };
  let bytes = 0n;
  let entries = 0;
  const files: Array<{ path: string; bytes: bigint }> = [];
  const walk = (current: string): void => {
    for (const name of namesIn(current)) {
      if (++entries > MAX_ENTRIES) return;
      const path = join(current, name);
      const s = lstatOrNothing(path);
      if (s === undefined || s.dev !== root.dev) continue;
      const taken = s.blocks * 512n;
      bytes += taken;
      if (s.isDirectory()) walk(path);
      else if (taken > 0n) files.push({ path, bytes: taken });
    }
  };
  walk(dir);
  files.sort((a, b) => (b.bytes > a.bytes ? 1 : b.bytes < a.bytes ? -1 : 0));
  return { bytes, largest: files.slice(0, 3) };
}

/** A folder's names; none when it cannot be read (gone meanwhile, not a folder, no permission). */
function namesIn(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** An entry's lstat; nothing when it cannot be had (removed meanwhile, no permission). */
function lstatOrNothing(path: string): BigIntStats | undefined {
  try {
    return lstatSync(path, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** The check whose requirement a space fault breaks, whichever check ran into it. */
export const SPACE_WITHIN_BOUND = 'safety.space-within-bound';

/** A plugin call during which its sandbox grew past the bound: the call was stopped. */
export interface SpaceFault {
  checkId: string;
  operation: string;
  sandbox: string;
  limitBytes: bigint;
  taken: SpaceTaken;
}

/** `the create of create.path took 212 MiB in /tmp/dhv-check-x/03-create.path, past its bound of 128 MiB (…): …`. */
export function describeSpaceFault(fault: SpaceFault): string {
  const files = fault.taken.largest.map((f) => `${f.path} (${formatSize(f.bytes)})`).join(', ');
  return (
    `the ${fault.operation} of ${fault.checkId} was stopped: the sandbox ${fault.sandbox} took ${sizeWords(fault.taken.bytes)}, ` +
    `past its bound of ${sizeWords(fault.limitBytes)} (${formatSize(SPACE_SLACK_BYTES)} plus the capacity asked for each volume)` +
    `${files === '' ? '' : `; largest: ${files}`}; a plugin must not take more than it was asked for`
  );
}

/**
 * The space one sandbox may take, and the watch that holds a plugin to it. Each volume a
 * call asks for adds its capacity (capacity_max, else capacity_min, else the capacity
 * bound) to the sandbox's allowance, on top of SPACE_SLACK_BYTES. While any call runs in
 * the sandbox its space is measured every SPACE_POLL_MS, and once more when the call
 * ends; past the allowance every running call is stopped and the fault kept.
 */
export class SandboxSpace {
  private readonly allowances = new Map<string, bigint>();
  private readonly running = new Set<AbortController>();
  private polling: Promise<void> | undefined;
  fault: SpaceFault | undefined;

  constructor(
    readonly dir: string,
    private readonly bound: bigint,
    private readonly checkId: string,
    private readonly onFault: (fault: SpaceFault) => void,
  ) {}

  get limitBytes(): bigint {
    let sum = SPACE_SLACK_BYTES;
    for (const bytes of this.allowances.values()) sum += bytes;
    return sum;
  }

  /**
   * Refuses a call that asks for more than the bound (before anything runs), then runs it
   * with a signal that the watch aborts when the sandbox grows past its allowance.
   */
  async watch<T>(operation: string, env: Record<string, string>, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    this.allow(env);
    const stop = new AbortController();
    this.running.add(stop);
    this.polling ??= this.poll(operation);
    try {
      return await run(stop.signal);
    } finally {
      this.running.delete(stop);
      this.measure(operation);
    }
  }

  private allow(env: Record<string, string>): void {
    const asked = askedCapacities(env);
    if (asked === undefined) return;
    for (const [name, bytes] of [
      ['capacity_min', asked.min],
      ['capacity_max', asked.max],
    ] as const) {
      if (bytes > this.bound)
        throw new CapacityPastBoundError(
          `dhv check was about to ask the plugin for a ${name} of ${sizeWords(bytes)}, past its bound of ${sizeWords(this.bound)} (--capacity-max, else ${formatSize(DEFAULT_CAPACITY_BOUND)}); nothing was run`,
        );
    }
    const allowance = asked.max > 0n ? asked.max : asked.min > 0n ? asked.min : this.bound;
    const volumeId = env[ENV.volumeId] ?? '';
    const before = this.allowances.get(volumeId) ?? 0n;
    if (allowance > before) this.allowances.set(volumeId, allowance);
  }

  private async poll(operation: string): Promise<void> {
    while (this.running.size > 0) {
      await new Promise((resolve) => setTimeout(resolve, SPACE_POLL_MS));
      if (this.running.size === 0) break;
      this.measure(operation);
    }
    this.polling = undefined;
  }

  private measure(operation: string): void {
    if (this.fault !== undefined) return;
    const taken = spaceTaken(this.dir);
    const limitBytes = this.limitBytes;
    if (taken.bytes <= limitBytes) return;
    this.fault = { checkId: this.checkId, operation, sandbox: this.dir, limitBytes, taken };
    for (const stop of this.running) stop.abort();
    this.onFault(this.fault);
  }
}

/** What every check may ask and take, in words (`dhv check --list`, the README). */
export const CHECK_BOUNDS_TEXT =
  `"The capacities given" are --capacity-min and --capacity-max (0, unset, when not given). ` +
  `No capacity dhv check asks for is larger than --capacity-max, or ${formatSize(DEFAULT_CAPACITY_BOUND)} when it is not given. ` +
  `While a call runs, its check's sandbox may take ${formatSize(SPACE_SLACK_BYTES)} plus, for each volume asked for, ` +
  `its capacity_max (else capacity_min, else that bound); a plugin that takes more is stopped and fails ${SPACE_WITHIN_BOUND}, and the run stops.`;
