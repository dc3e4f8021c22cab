import { formatSize } from '@dhv/sdk';
import type { HostVolume } from '../agent/volume-view.js';
import { columns, keyValues } from './columns.js';

/** `nomad volume status <id>`: the detail block, then Capabilities and Allocations. */
export function volumeDetail(v: HostVolume, indent = ''): string {
  const block = keyValues(
    [
      ['ID', v.ID],
      ['Name', v.Name],
      ['Namespace', v.Namespace],
      ['Plugin ID', v.PluginID],
      ['Node ID', v.NodeID],
      ['Node Pool', v.NodePool],
      ['Capacity', formatSize(v.CapacityBytes)],
      ['State', v.State],
      ...(v.StateError ? ([['State Error', v.StateError]] as const) : []),
      ['Host Path', v.HostPath],
    ],
    indent,
  );
  const capabilities = columns(
    ['Access Mode', 'Attachment Mode'],
    v.RequestedCapabilities.map((c) => [c.AccessMode, c.AttachmentMode]),
    indent,
  );
  return `${block}\n\n${indent}Capabilities\n${capabilities}\n\n${indent}Allocations\n${indent}No allocations placed`;
}

/** `nomad volume status`: the list of dynamic host volumes, IDs cut to 8 characters. */
export function volumeList(volumes: readonly HostVolume[]): string {
  if (volumes.length === 0) return 'No dynamic host volumes';
  return `Dynamic Host Volumes\n${columns(
    ['ID', 'Name', 'Namespace', 'Plugin ID', 'Node ID', 'Node Pool', 'State'],
    volumes.map((v) => [short(v.ID), v.Name, v.Namespace, v.PluginID || '<none>', short(v.NodeID), v.NodePool, v.State]),
  )}`;
}

export function short(id: string): string {
  return id.slice(0, 8);
}
