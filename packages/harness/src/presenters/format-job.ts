import { jobStatusOf, type Allocation } from '../agent/allocations/alloc-status.js';
import type { JobRunReport, PlacementFailure } from '../agent/allocations/jobs.js';
import type { JobRecord } from '../agent/state/job-records.js';
import { columns, keyValues } from './columns.js';

export type AllocRow = Pick<
  Allocation,
  'ID' | 'NodeID' | 'TaskGroup' | 'JobVersion' | 'DesiredStatus' | 'ClientStatus' | 'CreateTime' | 'ModifyTime'
>;

/**
 * Nomad's `prettyTimeDiff`: each time rounded to the second, its two largest non-zero periods
 * (days count to 30, months to 12): `12s ago`, `1m5s ago`, `2h3m ago`, `1mo15d ago`; a time
 * after now is `from now`.
 */
export function ago(nanos: number, now = Date.now()): string {
  const diff = Math.round(now / 1000) - Math.round(nanos / 1e9);
  const suffix = diff < 0 ? 'from now' : 'ago';
  let u = Math.abs(diff);
  const parts: string[] = [];
  for (const [unit, size] of [
    ['s', 60],
    ['m', 60],
    ['h', 24],
    ['d', 30],
    ['mo', 12],
  ] as const) {
    if (u % size > 0) parts.push(`${u % size}${unit}`);
    u = Math.floor(u / size);
  }
  if (u > 0) parts.push(`${u}y`);
  if (parts.length === 0) return `0s ${suffix}`;
  return `${parts.slice(-2).reverse().join('')} ${suffix}`;
}

/** Nomad's `formatTime` of Unix nanoseconds: RFC 3339 to the second (dhv's in UTC). */
export function formatTime(nanos: number): string {
  return new Date(nanos / 1e6).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** The allocation table of `nomad job status` and `nomad volume status`. */
export function allocTable(allocs: readonly AllocRow[], indent = ''): string {
  return columns(
    ['ID', 'Node ID', 'Task Group', 'Version', 'Desired', 'Status', 'Created', 'Modified'],
    allocs.map((a) => [
      a.ID.slice(0, 8),
      a.NodeID.slice(0, 8),
      a.TaskGroup,
      String(a.JobVersion),
      a.DesiredStatus,
      a.ClientStatus,
      ago(a.CreateTime),
      ago(a.ModifyTime),
    ]),
    indent,
  );
}

/** `Placement Failure` / `Task Group "g":` / `  * Constraint "...": 1 nodes excluded by filter`, as `nomad job status` prints it. */
export function placementFailures(failed: JobRecord['FailedTGAllocs']): string {
  const groups = Object.entries(failed).sort(([a], [b]) => (a < b ? -1 : 1));
  return [
    'Placement Failure',
    ...groups.flatMap(([group, f]) => [
      `Task Group "${group}":`,
      ...Object.entries(f.ConstraintFiltered).map(([c, n]) => `  * Constraint "${c}": ${n} nodes excluded by filter`),
    ]),
  ].join('\n');
}

/** What `nomad job run`'s monitor says about an evaluation, in its Info (`==> `) and Output (four spaces) lines. */
export function runMonitor(report: JobRunReport, now = new Date()): string {
  const t = formatTime(now.getTime() * 1e6);
  const e = report.evalId.slice(0, 8);
  const lines = [`==> ${t}: Monitoring evaluation "${e}"`, `    ${t}: Evaluation triggered by job "${report.job.ID}"`];
  for (const a of report.placed)
    lines.push(
      `    ${t}: Allocation "${a.ID.slice(0, 8)}" created: node "${a.NodeID.slice(0, 8)}", group "${a.TaskGroup}"`,
    );
  lines.push(`    ${t}: Evaluation status changed: "pending" -> "complete"`);
  if (report.failures.length === 0) {
    lines.push(`==> ${t}: Evaluation "${e}" finished with status "complete"`);
  } else {
    lines.push(`==> ${t}: Evaluation "${e}" finished with status "complete" but failed to place all allocations:`);
    for (const f of report.failures) lines.push(...failureLines(f, t));
    lines.push(
      `    ${t}: Evaluation "${report.blockedEval.slice(0, 8)}" waiting for additional capacity to place remainder`,
    );
  }
  for (const a of report.placed)
    lines.push(`    ${t}: Allocation "${a.ID.slice(0, 8)}" status "${a.ClientStatus}" (${a.ClientDescription})`);
  return lines.join('\n');
}

/** What `nomad job stop`'s monitor says about the stop's evaluation. */
export function stopMonitor(evalId: string, job: string, now = new Date()): string {
  const t = formatTime(now.getTime() * 1e6);
  const e = evalId.slice(0, 8);
  return [
    `==> ${t}: Monitoring evaluation "${e}"`,
    `    ${t}: Evaluation triggered by job "${job}"`,
    `    ${t}: Evaluation status changed: "pending" -> "complete"`,
    `==> ${t}: Evaluation "${e}" finished with status "complete"`,
  ].join('\n');
}

function failureLines(f: PlacementFailure, t: string): string[] {
  return [
    `    ${t}: Task Group "${f.group}" (failed to place ${f.count} ${f.count === 1 ? 'allocation' : 'allocations'}):`,
    `      * Constraint "${f.constraint}": 1 nodes excluded by filter`,
  ];
}

/** `nomad job status <job>`: the job block, placement failures, the allocation table. */
export function jobStatus(record: JobRecord, allocs: readonly Allocation[], options: { short?: boolean } = {}): string {
  const j = record.Job;
  const status = jobStatusOf(record, allocs);
  const parts = [
    keyValues([
      ['ID', j.ID],
      ['Name', j.Name],
      ['Submit Date', formatTime(j.SubmitTime)],
      ['Type', j.Type],
      ['Priority', '50'],
      ['Datacenters', '*'],
      ['Namespace', j.Namespace],
      ['Node Pool', 'default'],
      ['Status', j.Stop ? `${status} (stopped)` : status],
      ['Periodic', 'false'],
      ['Parameterized', 'false'],
    ]),
  ];
  if (options.short) return parts[0]!;
  if (Object.keys(record.FailedTGAllocs).length > 0) parts.push(placementFailures(record.FailedTGAllocs));
  parts.push(`Allocations\n${allocs.length > 0 ? allocTable(allocs) : 'No allocations placed'}`);
  return parts.join('\n\n');
}

/** `nomad alloc status <id>`: the allocation block, then each task's events. */
export function allocStatus(a: Allocation): string {
  const parts = [
    keyValues([
      ['ID', a.ID],
      ['Eval ID', a.EvalID.slice(0, 8)],
      ['Name', a.Name],
      ['Node ID', a.NodeID.slice(0, 8)],
      ['Node Name', a.NodeName],
      ['Job ID', a.JobID],
      ['Job Version', String(a.JobVersion)],
      ['Client Status', a.ClientStatus],
      ['Client Description', a.ClientDescription],
      ['Desired Status', a.DesiredStatus],
      ['Desired Description', a.DesiredDescription === '' ? '<none>' : a.DesiredDescription],
      ['Created', ago(a.CreateTime)],
      ['Modified', ago(a.ModifyTime)],
    ]),
  ];
  for (const [name, t] of Object.entries(a.TaskStates).sort(([x], [y]) => (x < y ? -1 : 1))) {
    parts.push(
      `Task "${name}" is "${t.State}"\nRecent Events:\n` +
        columns(
          ['Time', 'Type', 'Description'],
          [...t.Events].reverse().map((e) => [formatTime(e.Time), e.Type, e.DisplayMessage]),
        ),
    );
  }
  return parts.join('\n\n');
}
