import { describe, expect, it } from 'vitest';
import type { NamespaceRecord } from '../agent/namespaces.js';
import { namespaceJson, namespaceStatus, namespaceTable } from './format-namespace.js';

/** Namespaces as Nomad's command/namespace_list.go, namespace_status.go and the api package print them. */

const ns = (Name: string, Description: string, index = 1): NamespaceRecord => ({
  Name,
  Description,
  CreateIndex: index,
  ModifyIndex: index + 1,
});

describe('nomad namespace list', () => {
  it('is Name and Description sorted by name (byte order, as Go sorts), an empty description <none>', () => {
    expect(
      namespaceTable([
        ns('default', 'Default shared namespace'),
        ns('bare', ''),
        ns('Zed', 'caps first'),
        ns('analytics', 'Data team'),
      ]),
    ).toBe(
      [
        'Name       Description',
        'Zed        caps first',
        'analytics  Data team',
        'bare       <none>',
        'default    Default shared namespace',
      ].join('\n'),
    );
  });

  it('says so when there are none, and never lets a description forge a row', () => {
    expect(namespaceTable([])).toBe('No namespaces found');
    expect(namespaceTable([ns('a', 'line\nb  forged')])).toBe('Name  Description\na     line\\nb  forged');
  });
});

describe('nomad namespace status', () => {
  it('is the basics block: every driver and network mode enabled, as a namespace without capabilities shows', () => {
    expect(namespaceStatus(ns('analytics', 'Data team'))).toBe(
      [
        'Name                   = analytics',
        'Description            = Data team',
        'Quota                  = <none>',
        'Enabled Drivers        = *',
        'Disabled Drivers       = <none>',
        'Enabled Network Modes  = *',
        'Disabled Network Modes = <none>',
      ].join('\n'),
    );
    expect(namespaceStatus(ns('bare', '')).split('\n')[1]).toBe('Description            = <none>');
  });

  it('-json is api.Namespace, with what dhv does not model null', () => {
    expect(JSON.stringify(namespaceJson(ns('analytics', 'Data team', 7)))).toBe(
      '{"Name":"analytics","Description":"Data team","Quota":"","Capabilities":null,"NodePoolConfiguration":null,' +
        '"VaultConfiguration":null,"ConsulConfiguration":null,"Meta":null,"CreateIndex":7,"ModifyIndex":8,' +
        '"RequiredExtraClaims":null,"OptionalExtraClaims":null}',
    );
  });
});
