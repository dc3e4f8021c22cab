import { describe, expect, it } from 'vitest';
import { volumeSpec } from '../../__fixtures__/volume-spec.js';
import type { VolumeRecord } from '../state/client-state.js';
import { constraintHolds, placementProblem, type PlacementNode } from './placement.js';
import { updateProblem } from './update-rules.js';

const NODE_ID = '0b62d807-6101-a80f-374d-e1c430abbf47';
const node: PlacementNode = {
  nodeId: NODE_ID,
  nodePool: 'default',
  pluginDir: '/opt/plugins',
  updating: false,
  facts: {
    fingerprint: {
      plugins: [],
      skipped: [],
      attributes: {
        'plugins.host_volume.p.version': '1.2.0',
        'plugins.host_volume.mkdir.version': '0.0.1',
        'kernel.name': 'linux',
        'cpu.numcores': '8',
        'os.features': 'a,b, c',
        'kernel.version': '6.18.44-fc-v1272',
      },
    },
    fingerprintedAt: '',
    restoreWarnings: [],
    hostVolumes: new Map([
      ['taken', { Name: 'taken', Path: '/x', ReadOnly: false, ID: 'e3b0c442-98fc-1c14-9afb-f4c8996fb924' }],
    ]),
    volumeStates: new Map(),
  },
};

const holds = (attribute: string, operator: string, value: string) =>
  constraintHolds({ attribute, operator, value }, node);

describe("constraints, evaluated against the node with Nomad's operators", () => {
  it('compares attributes for equality, order, sets, regular expressions and versions', () => {
    expect(holds('${attr.kernel.name}', '=', 'linux')).toBe(true);
    expect(holds('${attr.kernel.name}', '!=', 'linux')).toBe(false);
    expect(holds('${attr.missing}', '!=', 'linux')).toBe(true);
    expect(holds('${attr.missing}', '=', 'linux')).toBe(false);
    expect(holds('${attr.cpu.numcores}', '>=', '4')).toBe(true);
    expect(holds('${attr.cpu.numcores}', '<', '4')).toBe(false);
    expect(holds('${attr.os.features}', 'set_contains', 'a,c')).toBe(true);
    expect(holds('${attr.os.features}', 'set_contains_any', 'x,b')).toBe(true);
    expect(holds('${attr.os.features}', 'set_contains_all', 'a,x')).toBe(false);
    expect(holds('${attr.kernel.name}', 'regexp', '^lin')).toBe(true);
    expect(holds('${attr.plugins.host_volume.p.version}', 'version', '>= 1.1, < 2')).toBe(true);
    expect(holds('${attr.plugins.host_volume.p.version}', 'version', '~> 1.3')).toBe(false);
    expect(holds('${attr.kernel.name}', 'is_set', '')).toBe(true);
    expect(holds('${attr.nope}', 'is_not_set', '')).toBe(true);
    expect(holds('${node.unique.id}', '=', NODE_ID)).toBe(true);
    expect(holds('${node.pool}', '=', 'default')).toBe(true);
  });

  it("applies go-version's pre-release rule to `version` (a kernel 6.18.44-fc-v1272 fails >= 5.10), not to `semver`", () => {
    expect(holds('${attr.kernel.version}', 'version', '>= 5.10')).toBe(false);
    expect(holds('${attr.kernel.version}', 'version', '~> 6.18')).toBe(false);
    expect(holds('${attr.kernel.version}', 'version', '< 7')).toBe(false);
    expect(holds('${attr.kernel.version}', 'version', '!= 5.10')).toBe(true);
    expect(holds('${attr.kernel.version}', 'version', '= 6.18.44-fc-v1272')).toBe(true);
    // A constraint with a pre-release admits pre-releases of the same segments only.
    expect(holds('${attr.kernel.version}', 'version', '>= 6.18.44-fc-v1000')).toBe(true);
    expect(holds('${attr.kernel.version}', 'version', '>= 6.18.0-fc')).toBe(false);
    // ... and a version without one, except through ~>.
    expect(holds('${attr.plugins.host_volume.p.version}', 'version', '>= 1.2.0-beta')).toBe(true);
    expect(holds('${attr.plugins.host_volume.p.version}', 'version', '~> 1.2.0-beta')).toBe(false);
    // Nomad's semver constraints are go-version's copy without the rule: Semver 2.0 ordering alone.
    expect(holds('${attr.kernel.version}', 'semver', '>= 5.10.0')).toBe(true);
  });

  it("resolves the node's own targets as Nomad's feasibility checker does: config facts, host attributes, meta", () => {
    const described: PlacementNode = {
      ...node,
      description: {
        name: 'web-1',
        datacenter: 'eu-west',
        nodeClass: '',
        nodePool: 'default',
        meta: { rack: 'r7' },
        hostAttributes: { 'kernel.name': 'linux', 'os.name': 'debian' },
      },
    };
    const on = (attribute: string, operator: string, value: string) =>
      constraintHolds({ attribute, operator, value }, described);
    expect(on('${attr.os.name}', '=', 'debian')).toBe(true);
    expect(on('${attr.plugins.host_volume.p.version}', 'is_set', '')).toBe(true);
    expect(on('${meta.rack}', '=', 'r7')).toBe(true);
    expect(on('${meta.row}', 'is_set', '')).toBe(false);
    expect(on('${node.datacenter}', '=', 'eu-west')).toBe(true);
    expect(on('${node.unique.name}', '=', 'web-1')).toBe(true);
    // An empty class is set (to ""), as in Nomad: is_set holds, = "" holds.
    expect(on('${node.class}', 'is_set', '')).toBe(true);
    expect(on('${node.class}', '=', '')).toBe(true);
    expect(on('${node.nope}', 'is_set', '')).toBe(false);
    expect(on('${attr.toString}', 'is_set', '')).toBe(false);
    expect(on('linux', '=', '${attr.kernel.name}')).toBe(true);
  });
});

describe('placement on this node', () => {
  it('needs the plugin fingerprinted, and says dhv agent fingerprint is the reload', () => {
    const err = placementProblem(volumeSpec({ pluginId: 'new' }), node);
    expect(err?.message).toMatch(
      /^could not place volume "v": no node meets constraints: 0 nodes had existing volume, 0 nodes filtered by node pool governance, 1 nodes were infeasible\nPlugin "new" is not fingerprinted.*run dhv agent fingerprint/,
    );
    expect(placementProblem(volumeSpec({}), node)).toBeUndefined();
  });

  it('passes over a node that already reports the name, unless node_id names it', () => {
    expect(placementProblem(volumeSpec({ name: 'taken' }), node)?.message).toMatch(
      /: no node meets constraints: 1 nodes had existing volume, /,
    );
    expect(placementProblem(volumeSpec({ name: 'taken', nodeId: NODE_ID }), node)).toBeUndefined();
  });

  it('does not tell a user to put a plugin in the plugin dir when it is there and its fingerprint was refused', () => {
    const withBadFingerprint: PlacementNode = {
      ...node,
      facts: {
        ...node.facts,
        fingerprint: {
          ...node.facts.fingerprint,
          skipped: [{ id: 'bf', executable: '/opt/plugins/bf', reason: 'invalid version "not a version"' }],
        },
      },
    };
    const err = placementProblem(volumeSpec({ pluginId: 'bf' }), withBadFingerprint);
    expect(err?.message).toContain('could not place volume "v": no node meets constraints');
    expect(err?.message).toContain('It is in /opt/plugins, but its fingerprint failed: invalid version');
    expect(err?.message).not.toContain('Put it in');
  });

  it('refuses a node named by node_id whose attributes fail a constraint', () => {
    const err = placementProblem(
      volumeSpec({
        nodeId: NODE_ID,
        constraints: [{ attribute: '${attr.kernel.name}', operator: '=', value: 'windows' }],
      }),
      node,
    );
    expect(err?.message).toMatch(
      new RegExp(`^could not place volume "v": node ${NODE_ID} is not feasible for volume\\nConstraint`),
    );
  });
});

describe('update rules', () => {
  const existing = {
    ID: 'e3b0c442-98fc-1c14-9afb-f4c8996fb924',
    HostPath: '/x',
    CreateReq: {
      ID: 'e3b0c442-98fc-1c14-9afb-f4c8996fb924',
      Name: 'v',
      PluginID: 'p',
      Namespace: 'default',
      NodeID: NODE_ID,
      RequestedCapacityMinBytes: 0n,
      RequestedCapacityMaxBytes: 0n,
      Parameters: null,
    },
    Volume: {
      NodePool: 'default',
      CapacityBytes: 2000n,
      RequestedCapabilities: [],
      Constraints: [],
      CreateTime: '',
      ModifyTime: '',
    },
  } satisfies VolumeRecord;

  it('lets the plugin and the name change', () => {
    expect(updateProblem(volumeSpec({ id: existing.ID, name: 'renamed', pluginId: 'q' }), existing)).toBeUndefined();
  });

  it("refuses another node, another pool and a capacity_max below the provisioned capacity, all at once, in Nomad's words", () => {
    const err = updateProblem(
      volumeSpec({ id: existing.ID, nodeId: 'other', nodePool: 'gpu', capacityMaxBytes: 1000n }),
      existing,
    );
    expect(err?.message).toBe(
      `validating volume "${existing.ID}" update failed: 3 errors occurred:\n\t* node ID cannot be updated\n\t* node pool cannot be updated\n\t* capacity_max (1000) cannot be less than existing provisioned capacity (2000)\n\n`,
    );
  });
});
