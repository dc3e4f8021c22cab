import { isGoVersion, isUuid } from '@dhv/sdk';
import type { ApiConstraint, ApiHostVolume } from './decode-host-volume.js';
import { goParseUint, goQuote } from '@dhv/sdk/client';
import { multierrorText } from '../go/multierror.js';

export const ACCESS_MODES = [
  'single-node-reader-only',
  'single-node-writer',
  'single-node-single-writer',
  'single-node-multi-writer',
] as const;
export const ATTACHMENT_MODES = ['file-system', 'block-device'] as const;

/**
 * nomad/structs HostVolume.Validate, each failed rule one message in Nomad's words and
 * order (a constraint's own errors nested in go-multierror's text, as Nomad nests them).
 */
export function validateHostVolume(vol: ApiHostVolume): string[] {
  const problems: string[] = [];
  if (vol.ID !== '' && !isUuid(vol.ID)) problems.push(`invalid ID ${goQuote(vol.ID)}`);
  if (vol.Name === '') problems.push('missing name');
  if (vol.RequestedCapacityMaxBytes < vol.RequestedCapacityMinBytes)
    problems.push(
      `capacity_max (${vol.RequestedCapacityMaxBytes}) must be larger than capacity_min (${vol.RequestedCapacityMinBytes})`,
    );
  for (const cap of vol.RequestedCapabilities ?? []) {
    if (!(ATTACHMENT_MODES as readonly string[]).includes(cap.AttachmentMode))
      problems.push(`invalid attachment mode: ${goQuote(cap.AttachmentMode)}`);
    else if (!(ACCESS_MODES as readonly string[]).includes(cap.AccessMode))
      problems.push(`invalid access mode: ${goQuote(cap.AccessMode)}`);
  }
  for (const constraint of vol.Constraints ?? []) {
    const errors = validateConstraint(constraint);
    if (errors.length > 0) problems.push(`invalid constraint: ${multierrorText(errors)}`);
    if (constraint.Operand === 'distinct_hosts' || constraint.Operand === 'distinct_property')
      problems.push(
        `invalid constraint ${constraint.Operand}: host volumes of the same name are always on distinct hosts`,
      );
  }
  return problems;
}

/** How the endpoint returns Validate's error: one alone, several flattened as go-multierror lists them. */
export function hostVolumeValidationError(problems: readonly string[]): string {
  const body = problems.length === 1 ? problems[0]! : multierrorText(problems);
  return `volume validation failed: ${body}`;
}

/** nomad/structs Constraint.Validate with validateConstraintAttribute. */
export function validateConstraint(c: ApiConstraint): string[] {
  const errors: string[] = [];
  if (c.Operand === '') errors.push('Missing constraint operand');
  let requireLTarget = true;
  switch (c.Operand) {
    case 'distinct_hosts':
      requireLTarget = false;
      break;
    case 'set_contains_all':
    case 'set_contains_any':
    case 'set_contains':
      if (c.RTarget === '') errors.push('Set contains constraint requires an RTarget');
      break;
    case 'regexp': {
      const problem = goRegexpProblem(c.RTarget);
      if (problem) errors.push(`Regular expression failed to compile: ${problem}`);
      break;
    }
    case 'version': {
      const bad = versionConstraintProblem(c.RTarget, true);
      if (bad !== undefined) errors.push(`Version constraint is invalid: malformed constraint: ${bad}`);
      break;
    }
    case 'semver': {
      const bad = versionConstraintProblem(c.RTarget, false);
      if (bad !== undefined) errors.push(`Semver constraint is invalid: Malformed constraint: ${bad}`);
      break;
    }
    case 'distinct_property':
      if (c.RTarget !== '') {
        const count = goParseUint(c.RTarget, 10, 64);
        if (!count.ok) errors.push(`Failed to convert RTarget ${goQuote(c.RTarget)} to uint64: ${count.error}`);
        else if (count.value < 1n)
          errors.push(`Distinct Property must have an allowed count of 1 or greater: ${c.RTarget} < 1`);
      }
      break;
    case 'is_set':
    case 'is_not_set':
      if (c.RTarget !== '') errors.push(`Operator ${goQuote(c.Operand)} does not support an RTarget`);
      break;
    case '=':
    case '==':
    case 'is':
    case '!=':
    case 'not':
    case '<':
    case '<=':
    case '>':
    case '>=':
      if (c.RTarget === '') errors.push(`Operator ${goQuote(c.Operand)} requires an RTarget`);
      break;
    default:
      errors.push(`Unknown constraint type ${goQuote(c.Operand)}`);
  }
  if (requireLTarget) {
    if (c.LTarget === '') errors.push('no attribute provided but is required by operator');
    else {
      const bad = constraintAttributeProblem(c.LTarget);
      if (bad) errors.push(bad);
    }
  }
  return errors;
}

const EXACT_TARGETS = [
  '${node.unique.id}',
  '${node.datacenter}',
  '${node.unique.name}',
  '${node.class}',
  '${node.pool}',
];
const PREFIX_TARGETS = ['${attr.', '${device.', '${meta.'];

/** nomad/structs/constraint.go validateConstraintAttribute. */
function constraintAttributeProblem(target: string): string | undefined {
  if (!target.startsWith('$')) return undefined;
  if (!target.startsWith('${')) return `attribute ${goQuote(target)} is missing an opening brace`;
  if (!target.endsWith('}')) return `attribute ${goQuote(target)} is missing a closing brace`;
  if (EXACT_TARGETS.includes(target) || PREFIX_TARGETS.some((p) => target.startsWith(p))) return undefined;
  return `unsupported attribute ${goQuote(target)}`;
}

/** go-version's (or Nomad's semver) NewConstraint: the first piece that does not parse, if any. */
function versionConstraintProblem(text: string, pessimistic: boolean): string | undefined {
  const ops = pessimistic ? '~>|>=|<=|!=|=|>|<' : '>=|<=|!=|=|>|<';
  for (const piece of text.split(',')) {
    const m = new RegExp(`^\\s*(${ops})?\\s*(\\S+)\\s*$`).exec(piece);
    if (!m || !isGoVersion(m[2]!)) return piece;
  }
  return undefined;
}

/** Whether Go's regexp.Compile would refuse a pattern, in its words where dhv knows them. */
function goRegexpProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern, 'u');
    return undefined;
  } catch {
    const bracket = pattern.lastIndexOf('[');
    if (bracket !== -1 && !pattern.slice(bracket).includes(']'))
      return `error parsing regexp: missing closing ]: \`${pattern.slice(bracket)}\``;
    if ((pattern.match(/\(/g) ?? []).length > (pattern.match(/\)/g) ?? []).length)
      return `error parsing regexp: missing closing ): \`${pattern}\``;
    return `error parsing regexp: invalid syntax: \`${pattern}\``;
  }
}
