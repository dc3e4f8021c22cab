import type { NamespaceRecord } from '../agent/namespaces.js';
import { columns, keyValues, NONE } from './columns.js';
import { printable } from './format-volume.js';

/** A namespace as Nomad's CLI prints it with -json (`api.Namespace`): the parts dhv does not model are null. */
export function namespaceJson(ns: NamespaceRecord) {
  return {
    Name: ns.Name,
    Description: ns.Description,
    Quota: '',
    Capabilities: null,
    NodePoolConfiguration: null,
    VaultConfiguration: null,
    ConsulConfiguration: null,
    Meta: null,
    CreateIndex: ns.CreateIndex,
    ModifyIndex: ns.ModifyIndex,
    RequiredExtraClaims: null,
    OptionalExtraClaims: null,
  };
}

/** `nomad namespace list`: Name and Description, sorted by name, an empty field as `<none>`. */
export function namespaceTable(namespaces: readonly NamespaceRecord[]): string {
  if (namespaces.length === 0) return 'No namespaces found';
  const sorted = [...namespaces].sort((a, b) => (a.Name < b.Name ? -1 : a.Name > b.Name ? 1 : 0));
  return columns(
    ['Name', 'Description'],
    sorted.map((n) => [n.Name, n.Description === '' ? NONE : printable(n.Description)]),
  );
}

/** `nomad namespace status <name>`: the basics block (every driver and network mode allowed: dhv has no capabilities). */
export function namespaceStatus(ns: NamespaceRecord): string {
  return keyValues([
    ['Name', ns.Name],
    ['Description', printable(ns.Description)],
    ['Quota', ''],
    ['Enabled Drivers', '*'],
    ['Disabled Drivers', ''],
    ['Enabled Network Modes', '*'],
    ['Disabled Network Modes', ''],
  ]);
}
