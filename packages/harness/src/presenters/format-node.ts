import type { NodeStatus } from '../agent/agent.js';
import type { Fingerprint } from '../agent/plugins.js';
import { columns, keyValues } from './columns.js';
import { printable } from './format-volume.js';

export interface NodeFormat {
  /** `-short`: the key = value block only. */
  short?: boolean;
  /** `-verbose`: the Host Volumes and Drivers tables, Attributes and Meta. */
  verbose?: boolean;
}

/**
 * `nomad node status -self`: Nomad's key = value block, then (not -short) the node's
 * host volumes with their IDs (dhv shows them without -verbose too: they are what it is
 * about) and the plugins the fingerprint skipped; -verbose adds Drivers, Attributes and
 * Meta as Nomad's does. Nomad's allocation, resource and event sections are left out:
 * the simulated node runs no workload.
 */
export function nodeDetail(
  { node, skippedPlugins }: NodeStatus,
  { short = false, verbose = false }: NodeFormat = {},
): string {
  const names = Object.keys(node.HostVolumes).sort();
  const block = keyValues([
    ['ID', node.ID],
    ['Name', printable(node.Name)],
    ['Node Pool', node.NodePool],
    ['Class', printable(node.NodeClass)],
    ['DC', printable(node.Datacenter)],
    ['Drain', String(node.Drain)],
    ['Eligibility', node.SchedulingEligibility],
    ['Status', node.Status],
    ...(verbose ? [] : ([['Host Volumes', names.map(printable).join(',')]] as const)),
    ...(short ? ([['Drivers', '']] as const) : verbose ? [] : ([['Driver Status', '']] as const)),
  ]);
  if (short) return block;
  const parts = [block, `Host Volumes\n${hostVolumeTable(node.HostVolumes, verbose)}`];
  if (skippedPlugins.length > 0) parts.push(`Skipped Plugins\n${skippedTable(skippedPlugins)}`);
  if (verbose) {
    parts.push(`Drivers\n${columns(['Driver', 'Detected', 'Healthy', 'Message', 'Time'], [])}`);
    parts.push(`Attributes\n${keyValues(sortedEntries(node.Attributes))}`);
    parts.push(`Meta\n${keyValues(sortedEntries(node.Meta).map(([k, v]) => [printable(k), printable(v)]))}`);
  }
  return parts.join('\n\n');
}

function sortedEntries(map: Record<string, string>): Array<[string, string]> {
  return Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function hostVolumeTable(hostVolumes: NodeStatus['node']['HostVolumes'], verbose: boolean): string {
  const names = Object.keys(hostVolumes).sort();
  if (names.length === 0) return 'No host volumes';
  return columns(
    ['Name', 'ReadOnly', 'ID', 'Source'],
    names.map((name) => {
      const v = hostVolumes[name]!;
      const id = v.ID === '' ? '<static>' : verbose ? v.ID : v.ID.slice(0, 8);
      return [printable(name), String(v.ReadOnly), id, printable(v.Path)];
    }),
  );
}

/** `dhv agent fingerprint`: the attributes the plugins gave the node, and what was skipped. */
export function fingerprintText(fingerprint: Fingerprint): string {
  const parts = [
    `Plugins\n${columns(
      ['ID', 'Version', 'Executable'],
      fingerprint.plugins.map((p) => [p.id, p.version, p.executable]),
    )}`,
    `Attributes\n${keyValues(Object.entries(fingerprint.attributes))}`,
  ];
  if (fingerprint.skipped.length > 0) parts.push(`Skipped Plugins\n${skippedTable(fingerprint.skipped)}`);
  const logged = [
    ...(fingerprint.logs ?? []).map((l) => logLine(l)),
    ...fingerprint.skipped.flatMap((s) => (s.logged ? [logLine(s.logged, s.id)] : [])),
  ];
  if (logged.length > 0) parts.push(`Agent Log\n${logged.join('\n')}`);
  const stderr = [...fingerprint.plugins, ...fingerprint.skipped].filter((p) => (p.stderr ?? '').trim() !== '');
  if (stderr.length > 0)
    parts.push(
      `Plugin stderr\n${stderr.map((p) => `  ${p.id}:\n${p.stderr!.trimEnd().replace(/^/gm, '    ')}`).join('\n')}`,
    );
  const warnings = fingerprint.plugins.flatMap((p) => (p.warnings ?? []).map((w) => `  ${p.id}: ${w}`));
  if (warnings.length > 0) parts.push(`Warnings\n${warnings.join('\n')}`);
  if (fingerprint.nomadCrash)
    parts.push(
      `Nomad Crash\n  a real Nomad agent panics fingerprinting ${fingerprint.nomadCrash.pluginId} (panic: ${fingerprint.nomadCrash.panic}) ` +
        'and publishes nothing; dhv skipped that plugin',
    );
  return parts.join('\n\n');
}

/** A line as the agent logs it: `[ERROR] error running plugin: plugin_id=x error="exit status 1"`. */
function logLine(line: NonNullable<NonNullable<Fingerprint['logs']>[number]>, pluginId?: string): string {
  const fields = [
    ...(pluginId !== undefined ? [`plugin_id=${pluginId}`] : []),
    ...(line.dir !== undefined ? [`dir=${JSON.stringify(line.dir)}`] : []),
    ...(line.error !== undefined ? [`error=${JSON.stringify(line.error)}`] : []),
  ];
  return `  [${line.level.toUpperCase()}] ${line.message}${fields.length > 0 ? `: ${fields.join(' ')}` : ''}`;
}

function skippedTable(skipped: Fingerprint['skipped']): string {
  // A reason of several lines goes on under its own column.
  return columns(
    ['ID', 'Reason'],
    skipped.flatMap((s) => s.reason.split('\n').map((line, i) => [i === 0 ? s.id : '', line])),
  );
}
