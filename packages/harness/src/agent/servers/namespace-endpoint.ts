import { goQuote } from '@dhv/sdk/client';
import { AgentError } from '../../errors/agent-error.js';
import { multierrorText } from '../../go/multierror.js';
import { DEFAULT_NAMESPACE, NAMESPACE_NAME } from '../state/namespace-records.js';

/** Nomad's `maxNamespaceDescriptionLength`. */
const MAX_DESCRIPTION = 256;

/** The region Nomad's delete names in its refusals: a lone agent's is `global`. */
const REGION = 'global';

/** What `Namespace.UpsertNamespaces` refuses (Nomad's `Namespace.Validate`), in its words. */
export function refuseInvalidNamespace(name: string, description: string): void {
  const problems: string[] = [];
  if (!NAMESPACE_NAME.test(name))
    problems.push(`invalid name ${goQuote(name)}. Must match regex ${NAMESPACE_NAME.source}`);
  if (description.length > MAX_DESCRIPTION) problems.push(`description longer than ${MAX_DESCRIPTION}`);
  if (problems.length === 0) return;
  throw new AgentError(
    'NAMESPACE_INVALID',
    `Invalid namespace ${goQuote(name)}: ${multierrorText(problems).trimEnd()}\nA name is 1 to 128 letters, digits and dashes; a description at most ${MAX_DESCRIPTION} characters.`,
    { namespace: name, problems },
  );
}

/** The servers' refusal of a volume in a namespace that does not exist (after the spec's own problems, as Nomad checks it). */
export function noSuchNamespaceForVolume(namespace: string): AgentError {
  return new AgentError(
    'NAMESPACE_NOT_FOUND',
    `volume validation failed: no such namespace ${goQuote(namespace)}\n${applyHint(namespace)}`,
    { namespace },
  );
}

/** The register validator's words for a job in a namespace that does not exist (one problem of Nomad's multierror). */
export function noSuchNamespaceForJob(jobId: string, namespace: string): string {
  return `job ${goQuote(jobId)} is in nonexistent namespace ${goQuote(namespace)}`;
}

function applyHint(namespace: string): string {
  return NAMESPACE_NAME.test(namespace)
    ? `Create it with dhv namespace apply ${namespace}; dhv namespace list shows the namespaces there are.`
    : 'dhv namespace list shows the namespaces there are.';
}

/** What still lives in a namespace a delete would remove (Nomad looks at jobs and allocations; CSI volumes, variables and quotas are not modelled). */
export interface NamespaceUse {
  nonTerminalJobs: boolean;
  nonTerminalAllocs: boolean;
}

/** `Namespace.DeleteNamespaces` then the state store's delete: refused for `default`, a missing namespace, or one still in use. */
export function refuseNamespaceDelete(name: string, exists: boolean, use: NamespaceUse): void {
  if (name === DEFAULT_NAMESPACE) {
    throw new AgentError(
      'NAMESPACE_IN_USE',
      'can not delete default namespace\nThe default namespace always exists, as in Nomad.',
      { namespace: name },
    );
  }
  if (!exists) {
    throw new AgentError(
      'NAMESPACE_NOT_FOUND',
      'namespace not found\nRun dhv namespace list to see the namespaces there are.',
      { namespace: name },
    );
  }
  const problems: string[] = [];
  const where = `in regions: [${REGION}]`;
  if (use.nonTerminalJobs) problems.push(`namespace ${goQuote(name)} has non-terminal jobs ${where}`);
  if (use.nonTerminalAllocs) problems.push(`namespace ${goQuote(name)} has non-terminal allocations ${where}`);
  if (problems.length === 0) return;
  throw new AgentError(
    'NAMESPACE_IN_USE',
    `${multierrorText(problems).trimEnd()}\nStop its jobs first (dhv job status lists them; dhv job stop -namespace ${name} <job>), then delete the namespace.`,
    { namespace: name, problems },
  );
}
