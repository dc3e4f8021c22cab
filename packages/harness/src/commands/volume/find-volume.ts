import { goQuote } from '@dhv/sdk/client';
import type { Agent } from '../../agent/agent.js';
import { lookupVolume } from '../../agent/volume-lookup.js';
import type { HostVolume } from '../../agent/volume-view.js';
import { AgentError } from '../../errors/agent-error.js';
import { ambiguousPrefixText } from '../../presenters/format-volume.js';

/**
 * The volume a user named by ID, ID prefix, name or name prefix in `namespace`, as
 * Nomad's CLI finds it; a prefix that matches several is refused with Nomad's table of them.
 * `context` is what Nomad's command says before a failed lookup.
 */
export async function findVolume(
  agent: Agent,
  ref: string,
  namespace: string,
  { command, verbose = false }: { command: 'status' | 'create' | 'register' | 'delete'; verbose?: boolean },
): Promise<HostVolume> {
  const lookup = lookupVolume(await agent.volumes(), ref, namespace);
  if ('found' in lookup) return lookup.found;
  if ('ambiguous' in lookup) {
    throw new AgentError(
      'VOLUME_ID_AMBIGUOUS',
      `${ambiguousPrefixText(lookup.ambiguous, { command, verbose })}\n\nGive more of the ID, or the whole name.`,
      { matches: lookup.ambiguous.map((v) => v.ID) },
    );
  }
  // A volume whose record does not load is listed nowhere; named by its ID, its own error says what to do.
  const unreadable = await agent.unreadableVolume(ref);
  if (unreadable) throw unreadable;
  const context = {
    status: 'Error listing host volumes',
    create: 'Could not update existing volume',
    register: 'Could not update existing volume',
    delete: 'Could not find existing host volume to delete',
  }[command];
  throw new AgentError(
    'VOLUME_NOT_FOUND',
    `${context}: no volumes with prefix or ID ${goQuote(ref)} found\n` +
      `Run dhv volume status to list the volumes of namespace "${namespace}" (-namespace '*' lists every namespace).`,
    { ref, namespace },
  );
}
