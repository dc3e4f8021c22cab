import { parseGoVersion, type GoVersion } from '@dhv/sdk';
import { DEFAULT_PLUGIN_ID, type Constraint, type VolumeSpec } from '../../volume-specs/volume-spec.js';
import { AgentError } from '../../errors/agent-error.js';
import type { NodeFacts } from '../state/node-facts.js';
import { versionAttribute } from '../plugins.js';
import { nodeAttributes, type NodeDescription } from '../node-description.js';

export interface PlacementNode {
  nodeId: string;
  nodePool: string;
  facts: NodeFacts;
  pluginDir: string;
  /** Whether the spec's plugin is in the plugin dir now, whatever the node's last fingerprint saw. */
  pluginInDir?: boolean;
  /** The node's name, datacenter, class, meta and host attributes (without: dc1, no class, no meta, plugins' attributes only). */
  description?: NodeDescription;
  /** An update keeps the volume's node: the servers check the node, not the name on it. */
  updating: boolean;
}

/**
 * The servers' placement of a new volume on this one node (Nomad's placeHostVolume): the
 * plugin must be fingerprinted (an implicit `${attr.plugins.host_volume.<id>.version}
 * is_set`), the spec's constraints must hold for the node's attributes, and a node that
 * already reports the name is passed over. Returns Nomad's error, or undefined.
 */
export function placementProblem(spec: VolumeSpec, node: PlacementNode): AgentError | undefined {
  const place = (reason: string, hint: string, details: Record<string, unknown> = {}) =>
    new AgentError('PLACEMENT_FAILED', `could not place volume "${spec.name}": ${reason}\n${hint}`, {
      name: spec.name,
      ...details,
    });
  if (spec.nodeId !== '' && spec.nodeId !== node.nodeId) {
    return new AgentError(
      'SPEC_INVALID',
      `validating volume "${spec.name}" against state failed: node "${spec.nodeId}" does not exist\nThis simulated node is ${node.nodeId}; leave node_id out.`,
      {
        nodeId: spec.nodeId,
      },
    );
  }
  if (
    spec.nodePool !== '' &&
    spec.nodePool !== node.nodePool &&
    spec.nodePool !== 'default' &&
    spec.nodePool !== 'all'
  ) {
    return new AgentError(
      'SPEC_INVALID',
      `validating volume "${spec.name}" against state failed: node pool "${spec.nodePool}" does not exist\nThis node is in pool "${node.nodePool}"; leave node_pool out or use --node-pool.`,
      {
        nodePool: spec.nodePool,
      },
    );
  }
  if (spec.nodeId !== '' && spec.nodePool !== '' && spec.nodePool !== node.nodePool) {
    return new AgentError(
      'SPEC_INVALID',
      `validating volume "${spec.name}" against state failed: node ID "${spec.nodeId}" is not in pool "${spec.nodePool}"\nThis node is in pool "${node.nodePool}".`,
      {
        nodePool: spec.nodePool,
      },
    );
  }
  const unmet = unmetConstraints(spec, node);
  const fixedNode = spec.nodeId !== '' || node.updating;
  if (fixedNode) {
    if (unmet.length === 0) return undefined;
    return place(`node ${node.nodeId} is not feasible for volume`, unmet.join('\n'), { unmet });
  }
  const poolMismatch = spec.nodePool !== '' && spec.nodePool !== node.nodePool;
  const existing = !poolMismatch && node.facts.hostVolumes.has(spec.name) ? 1 : 0;
  const infeasible = !poolMismatch && existing === 0 && unmet.length > 0 ? 1 : 0;
  if (!poolMismatch && existing === 0 && infeasible === 0) return undefined;
  const holder = node.facts.hostVolumes.get(spec.name)?.ID;
  const hint = poolMismatch
    ? `This node is in pool "${node.nodePool}", not "${spec.nodePool}"; leave node_pool out or use --node-pool.`
    : existing
      ? holder
        ? `This node already reports a host volume named "${spec.name}" (volume ${holder}); choose another name, or set id = "${holder}" to update it.`
        : `This node already reports a static host volume named "${spec.name}"; choose another name, or set node_id to place the volume here anyway (it then hides the static one).`
      : unmet.join('\n');
  return place(
    `no node meets constraints: ${existing} nodes had existing volume, 0 nodes filtered by node pool governance, ${infeasible} nodes were infeasible`,
    hint,
    {
      unmet,
      ...(holder ? { volumeId: holder } : {}),
    },
  );
}

/** Every placement constraint the node fails, each as one line saying why and what to do. */
function unmetConstraints(spec: VolumeSpec, node: PlacementNode): string[] {
  const attributes = node.facts.fingerprint.attributes;
  const unmet: string[] = [];
  if (!(versionAttribute(spec.pluginId) in attributes)) unmet.push(pluginNotFingerprinted(spec.pluginId, node));
  for (const c of spec.constraints) {
    if (!constraintHolds(c, node)) {
      const here = resolveTarget(c.attribute, node);
      const has = c.attribute.startsWith('${')
        ? ` (here ${c.attribute} is ${here === undefined ? 'not set' : JSON.stringify(here)})`
        : '';
      unmet.push(`Constraint ${c.attribute} ${c.operator} ${JSON.stringify(c.value)} is not met by this node${has}.`);
    }
  }
  return unmet;
}

/**
 * The implicit plugin constraint unmet, with what to do for its cause: a plugin whose
 * fingerprint failed, none named, one put in the plugin dir after the last fingerprint,
 * none there.
 */
function pluginNotFingerprinted(pluginId: string, node: PlacementNode): string {
  const lead = `Plugin "${pluginId}" is not fingerprinted on this node (no attribute ${versionAttribute(pluginId)}).`;
  const skipped = node.facts.fingerprint.skipped.find((s) => s.id === pluginId);
  if (skipped)
    return `${lead} It is in ${node.pluginDir}, but its fingerprint failed: ${skipped.reason.split('\n')[0]}. Fix the plugin, then run dhv agent fingerprint (dhv agent fingerprint shows the whole reason).`;
  if (pluginId === DEFAULT_PLUGIN_ID) {
    const known = node.facts.fingerprint.plugins.map((p) => p.id).join(', ');
    return `${lead} Nomad asks for the plugin "${DEFAULT_PLUGIN_ID}" when the spec sets no plugin_id: set plugin_id (this node has ${known || 'no plugin'}).`;
  }
  if (node.pluginInDir)
    return `${lead} It is in ${node.pluginDir}, but the node's last fingerprint did not see it (it came later, or the fingerprint read another plugin dir): run dhv agent fingerprint (a real agent needs a reload or restart) before creating volumes with it.`;
  return `${lead} Put it in ${node.pluginDir} and run dhv agent fingerprint (a real agent needs a reload or restart) before creating volumes with it.`;
}

/**
 * Resolves a constraint target against the node as Nomad's feasibility checker does
 * (resolveTarget): a target not starting with `${` is a literal; `${node.unique.id}`,
 * `${node.unique.name}`, `${node.datacenter}`, `${node.class}` and `${node.pool}` are the
 * node's (always set, an empty class too); `${attr.x}` and `${meta.x}` are set when the
 * node has them; anything else is never set.
 */
function resolveTarget(target: string, node: PlacementNode): string | undefined {
  if (!target.startsWith('${')) return target;
  const attributes = nodeAttributes(node.description, node.facts.fingerprint.attributes);
  const meta = node.description?.meta ?? {};
  const inner = (prefix: string) => target.slice(prefix.length).replace(/\}$/, '');
  switch (target) {
    case '${node.unique.id}':
      return node.nodeId;
    case '${node.datacenter}':
      return node.description?.datacenter ?? 'dc1';
    case '${node.unique.name}':
      return node.description?.name;
    case '${node.class}':
      return node.description?.nodeClass ?? '';
    case '${node.pool}':
      return node.nodePool;
  }
  if (target.startsWith('${attr.')) return lookup(attributes, inner('${attr.'));
  if (target.startsWith('${meta.')) return lookup(meta, inner('${meta.'));
  return undefined;
}

function lookup(map: Record<string, string>, key: string): string | undefined {
  return Object.prototype.hasOwnProperty.call(map, key) ? map[key] : undefined;
}

/** Nomad's constraint operators (the scheduler's checkConstraint), for the ones a host volume may use. */
export function constraintHolds(c: Constraint, node: PlacementNode): boolean {
  const l = resolveTarget(c.attribute, node);
  const r = resolveTarget(c.value, node);
  const both = l !== undefined && r !== undefined;
  switch (c.operator) {
    case '':
    case '=':
    case '==':
    case 'is':
      return both && l === r;
    case '!=':
    case 'not':
      return l !== r;
    case '<':
    case '<=':
    case '>':
    case '>=':
      return both && checkOrder(c.operator, l, r);
    case 'is_set':
      return l !== undefined;
    case 'is_not_set':
      return l === undefined;
    case 'regexp':
      try {
        return both && new RegExp(r).test(l);
      } catch {
        return false;
      }
    case 'version':
    case 'semver':
      return both && versionMatches(l, r, c.operator === 'version');
    case 'set_contains':
    case 'set_contains_all':
      return both && splitSet(r).every((x) => splitSet(l).includes(x));
    case 'set_contains_any':
      return both && splitSet(r).some((x) => splitSet(l).includes(x));
    default:
      return false;
  }
}

function splitSet(value: string): string[] {
  return value.split(',').map((s) => s.trim());
}

function checkOrder(op: string, l: string, r: string): boolean {
  const ln = Number(l);
  const rn = Number(r);
  const numeric = l.trim() !== '' && r.trim() !== '' && !Number.isNaN(ln) && !Number.isNaN(rn);
  const cmp = numeric ? Math.sign(ln - rn) : l < r ? -1 : l > r ? 1 : 0;
  return op === '<' ? cmp < 0 : op === '<=' ? cmp <= 0 : op === '>' ? cmp > 0 : cmp >= 0;
}

/**
 * go-version constraints: comma-separated `op version` terms, all of which must hold. With
 * `preReleaseRule` (the `version` operator: go-version's own Check; Nomad's `semver` one is a
 * copy without it), an ordering or `~>` term without a pre-release never admits a version
 * with one (a kernel `6.18.44-fc-v1272` fails `>= 5.10`), and one with a pre-release admits
 * only versions of the same segments.
 */
function versionMatches(value: string, constraint: string, preReleaseRule: boolean): boolean {
  const v = parseGoVersion(value.trim());
  if (!v.ok) return false;
  return constraint.split(',').every((term) => {
    const m = /^\s*(=|!=|>=|<=|>|<|~>)?\s*(\S+)\s*$/.exec(term);
    if (!m) return false;
    const want = parseGoVersion(m[2]!);
    if (!want.ok) return false;
    const cmp = compareVersions(v.version, want.version);
    const op = m[1] ?? '=';
    if (preReleaseRule && op !== '=' && op !== '!=' && !preReleaseAdmits(v.version, want.version, op === '~>')) {
      return false;
    }
    switch (op) {
      case '=':
        return cmp === 0;
      case '!=':
        return cmp !== 0;
      case '>':
        return cmp > 0;
      case '<':
        return cmp < 0;
      case '>=':
        return cmp >= 0;
      case '<=':
        return cmp <= 0;
      default: {
        // ~> 1.2.3 means >= 1.2.3 and < 1.3; ~> 1.2 means >= 1.2 and < 2.
        const given = m[2]!.replace(/^v/, '').split(/[-+]/)[0]!.split('.').length;
        const prefix = Math.max(1, given - 1);
        const same = v.version.segments.slice(0, prefix).every((s, i) => s === want.version.segments[i]);
        return cmp >= 0 && same;
      }
    }
  });
}

function preReleaseAdmits(v: GoVersion, c: GoVersion, pessimistic: boolean): boolean {
  if (c.prerelease !== '' && v.prerelease !== '') return v.segments.join('.') === c.segments.join('.');
  if (c.prerelease === '' && v.prerelease !== '') return false;
  if (c.prerelease !== '' && v.prerelease === '') return !pessimistic;
  return true;
}

function compareVersions(a: GoVersion, b: GoVersion): number {
  const n = Math.max(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    const x = a.segments[i] ?? 0n;
    const y = b.segments[i] ?? 0n;
    if (x !== y) return x < y ? -1 : 1;
  }
  if (a.prerelease === b.prerelease) return 0;
  if (a.prerelease === '') return 1;
  if (b.prerelease === '') return -1;
  return a.prerelease < b.prerelease ? -1 : 1;
}
