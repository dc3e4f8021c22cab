import type { NodeStatus } from '../agent/agent.js';
import type { Fingerprint } from '../agent/plugins.js';
import { columns, keyValues } from './columns.js';
import { printable } from './format-volume.js';

/** `nomad node status -self`, cut to what host volumes touch: the node, its host volumes, and plugin attributes. */
export function nodeDetail({ node, skippedPlugins }: NodeStatus): string {
  const parts = [
    keyValues([
      ['ID', node.ID],
      ['Name', node.Name],
      ['Node Pool', node.NodePool],
      ['Datacenter', node.Datacenter],
      ['Status', node.Status],
    ]),
    `Host Volumes\n${hostVolumeTable(node.HostVolumes)}`,
    `Attributes\n${keyValues(Object.entries(node.Attributes))}`,
  ];
  if (skippedPlugins.length > 0) parts.push(`Skipped Plugins\n${skippedTable(skippedPlugins)}`);
  return parts.join('\n\n');
}

function hostVolumeTable(hostVolumes: NodeStatus['node']['HostVolumes']): string {
  const names = Object.keys(hostVolumes);
  if (names.length === 0) return 'No host volumes';
  return columns(
    ['Name', 'ReadOnly', 'ID', 'Source'],
    names.map((name) => {
      const v = hostVolumes[name]!;
      return [printable(name), String(v.ReadOnly), v.ID === '' ? '<static>' : v.ID.slice(0, 8), printable(v.Path)];
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
  return columns(
    ['ID', 'Reason'],
    skipped.map((s) => [s.id, s.reason]),
  );
}
