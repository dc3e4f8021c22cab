import type { TeardownScope } from '@dhv/sdk/host';
import type { CreateResult, DeleteResult, PluginRun, RequestInput } from '@dhv/sdk/client';
import type { Step } from './explore/recipe.js';
import type { Leftover } from './host-leftovers.js';

/** The parts of PROTOCOL.md a plugin is checked against, in the order they are reported. */
/** `custom` holds the checks a plugin author adds (runConformance's extraChecks, conformanceTests' checks). */
export const AREAS = [
  'discovery',
  'environment',
  'create',
  'delete',
  'errors',
  'budgets',
  'safety',
  'tasks',
  'explore',
  'custom',
] as const;
export type Area = (typeof AREAS)[number];

/**
 * The one rule for severity: a check is required only when failing it means the plugin
 * breaks under a real Nomad agent (as PROTOCOL.md and the measured vectors describe it)
 * or loses or destroys data. Everything else is recommended: a failure is a warning.
 * A required failure fails the run; a required skip fails it under --strict.
 */
export type Severity = 'required' | 'recommended';

export type Status = 'pass' | 'fail' | 'warn' | 'skip';

export type CreateInput = RequestInput<'create'>;
export type DeleteInput = RequestInput<'delete'>;

export interface Check {
  /** `<area>.<name>`, stable: users pass it to --only and --skip. */
  id: string;
  area: Area;
  /** One sentence stating the requirement. */
  title: string;
  /** Where PROTOCOL.md states the rule, like `PROTOCOL.md § create`. */
  protocolRef: string;
  severity: Severity;
  /** Why the check has its severity, by the rule above: what breaks under Nomad, or why nothing does. */
  gradeReason: string;
  /**
   * Checks that must not have failed or been skipped first: this check would only
   * repeat their failure. Ignored when they are not part of the run.
   */
  needs?: readonly string[];
  /**
   * What the check asks of the plugin, in a phrase (`dhv check --list`): how many volumes,
   * at which capacities. Every capacity lies within the capacity bound (`--capacity-max`,
   * else 1 GiB). Absent: no volume is asked for.
   */
  asks?: string;
  /** Runs with no other check running, because it measures time. */
  alone?: boolean;
  run(ctx: CheckContext): Promise<void>;
}

/** The features a plugin may declare, so that dhv check fails a refusal of them instead of calling it a clean no. */
export const FEATURES = ['expansion'] as const;
export type Feature = (typeof FEATURES)[number];

/** What the user tells the suite about the plugin. */
export interface SuiteSettings {
  /** How often create.idempotent repeats the same create. */
  repeat: number;
  /** Given to every create and delete as DHV_PARAMETERS; null when none. */
  parameters: Record<string, string> | null;
  capacityMin: bigint;
  capacityMax: bigint;
  /** The smallest volume the plugin declares it makes (`--capacity-floor`); 0n: none declared. */
  capacityFloor: bigint;
  /**
   * Set when no capacity was given and the plugin refused a create without one but took one
   * of `bytes` (catalogue/default-capacity.ts): capacityMin is then `bytes`, chosen by dhv check.
   */
  fallbackCapacity?: FallbackCapacity;
  /** The capacity_min of the larger create in create.larger-capacity and create.expands; 0n: twice the first (or 16 MiB more). */
  expansionSize: bigint;
  /** The features the plugin declares (`--supports`): refusing one of them fails. */
  supports: Feature[];
  /** The explorer's random sequences (the explore area); `enabled: false` leaves the area out. */
  explore: ExploreSettings & { enabled: boolean };
}

/** The capacity dhv check asks for itself, because the plugin refused a create with none: why, and how much. */
export interface FallbackCapacity {
  bytes: bigint;
  /** Nomad's words for the refusal of the create with no capacity, then the end of the plugin's stderr when they leave it out. */
  refused: string;
}

export interface ExploreSettings {
  /** The same seed generates the same sequences. */
  seed: number;
  /** How many random sequences run (fewer only when one breaks the model), however long they take. */
  runs: number;
  /** Whether the systematic phase runs before them (it is the same for every seed). */
  systematic: boolean;
  /** One given sequence instead of random ones (`dhv check --replay`). */
  replay: Step[] | undefined;
}

export interface CheckContext {
  /** The plugin executable, absolute. */
  readonly plugin: string;
  readonly settings: SuiteSettings;
  /** A fresh, empty volumes dir owned by this check alone. */
  readonly volumesDir: string;
  /** The directory that holds volumesDir; nothing but the plugin's volumes should appear in it. */
  readonly sandbox: string;
  /** The sandbox in the kernel's terms, as it was made: a teardown acts only inside it, whatever link the plugin plants. */
  readonly sandboxScope: TeardownScope;
  /** An empty directory unrelated to the plugin, used as the working directory of every run. */
  readonly workDir: string;
  readonly signal: AbortSignal;
  /**
   * What the plugin's successful deletes and failed creates in this check left on the host
   * (loop devices, mounts, folders), found just after each call and already released:
   * the run reports each, and a check may judge them.
   */
  readonly leftovers: readonly Leftover[];

  /** A create request for a new volume (fresh UUID, unique name) with the user's parameters and capacities. */
  newVolume(overrides?: Partial<CreateInput>): CreateInput;
  /** The delete request the agent sends for a volume created with `request` at `createdPath`. */
  deleteRequest(request: CreateInput, createdPath: string): DeleteInput;

  /** Registers cleanup (the plugin's own delete) and then creates, as the agent runs it. */
  provision(request: CreateInput): Promise<CreateResult>;
  create(request: CreateInput): Promise<CreateResult>;
  delete(request: DeleteInput): Promise<DeleteResult>;
  /** Runs the plugin as the agent would and returns what happened, without judging it. */
  runAsAgent<Op extends 'fingerprint' | 'create' | 'delete'>(
    operation: Op,
    request: RequestInput<Op>,
    options?: { outputGraceMs?: number },
  ): Promise<PluginRun>;
  /** Runs the plugin with any argv and environment (unknown operations, hand-made environments). */
  runRaw(
    argv: readonly string[],
    env: Record<string, string>,
    /**
     * `outputGraceMs`: how long the output may stay open after the plugin exits (default: the
     * deadline); `executable`: a program of the check's own in the plugin's place (one that
     * runs the plugin as some agent would), given the same argv and environment; `signal`:
     * kills it (its process group) when aborted, as the agent does past a deadline.
     */
    options?: { cwd?: string; timeoutMs?: number; outputGraceMs?: number; executable?: string; signal?: AbortSignal },
  ): Promise<PluginRun>;

  /** Registers cleanup to run after the check, whatever happens; the last registered runs first. */
  cleanup(fn: () => unknown): void;
  /** Ends the check as failed. */
  fail(reason: string): never;
  /** Ends the check as skipped: it cannot judge this plugin. */
  skip(reason: string): never;
  /** Marks the check as passed with a warning, and carries on. */
  warn(reason: string): void;
  /** Adds a line to a passing check's report (a measured value, a normalised version). */
  note(text: string): void;
  /** Computed once per run and shared by the checks that ask for it; its volumes are removed at the end of the run. */
  shared<T>(key: string, compute: (ctx: CheckContext) => Promise<T>): Promise<T>;
}

/** What a result repeats of its check: the catalogue's words for it. */
export type CheckDescription = Pick<Check, 'id' | 'area' | 'title' | 'protocolRef' | 'severity' | 'gradeReason'>;

export function describeCheck({ id, area, title, protocolRef, severity, gradeReason }: Check): CheckDescription {
  return { id, area, title, protocolRef, severity, gradeReason };
}

export interface CheckResult extends CheckDescription {
  status: Status;
  /** Why it did not pass, or the warning. */
  reason?: string;
  notes: string[];
  durationMs: number;
}

export interface ConformanceReport {
  plugin: string;
  startedAt: string;
  durationMs: number;
  settings: {
    repeat: number;
    parameters: Record<string, string> | null;
    capacityMin: string;
    capacityMax: string;
    /** The capacity_min dhv check asked for where none was given, because the plugin refused none; absent otherwise. */
    fallbackCapacity?: { bytes: string; refused: string };
    expansionSize: string;
    supports: Feature[];
  };
  results: CheckResult[];
  summary: Record<Status, number> & { requiredFailed: number; requiredSkipped: number; recommendedFailed: number };
  /** Whether a skipped required check fails the run (--strict). */
  strict: boolean;
  /**
   * True when the run finished, no required check failed and, under strict, none was
   * skipped. The exit code, the table, JUnit and the test API all follow this.
   */
  ok: boolean;
  /** The run was cancelled (Ctrl-C, SIGTERM, the caller's signal); checks not yet started are skipped. */
  interrupted: boolean;
  /**
   * Why the run stopped before judging every check, when a defect made going on pointless
   * (a plugin whose leftover process holds its output makes every operation wait): the
   * checks not started are skipped, and the defect is the required failure reported.
   */
  stopped?: string;
}
