import { AgentError } from '../errors/agent-error.js';
import type { AgentParts } from './agent-parts.js';
import { deleteRequestFor, type ClientDeleteRequest } from './client/plugin-requests.js';
import { forgetVolumeState, volumeState } from './node-report.js';
import { asServersReturn } from './servers/host-volume-endpoint.js';
import { toHostVolume, type HostVolume } from './volume-view.js';

/**
 * `volume delete`, as the Agent's operation: deletes the volume of ID `id`, with the request
 * the servers would send. Like Nomad's API it takes a whole ID, never a prefix or a name:
 * which volume a user named is the CLI's lookup (`commands/volume/find-volume.ts`), done
 * once, before this.
 */
export async function deleteVolume(agent: AgentParts, id: string, namespace?: string): Promise<HostVolume> {
  const found = await agent.state.get(id);
  const elsewhere =
    found !== undefined &&
    namespace !== undefined &&
    namespace !== '*' &&
    (found.Volume.Namespace ?? found.CreateReq.Namespace) !== namespace;
  if (!found || elsewhere) {
    throw new AgentError(
      'VOLUME_NOT_FOUND',
      `no such volume: ${id}\nRun dhv volume status -namespace '*' to list the volumes.`,
      { ref: id },
    );
  }
  return agent.store.lock.volume(
    found.ID,
    { doing: `deleting volume "${found.CreateReq.Name}" (${found.ID})`, name: found.CreateReq.Name },
    async () => {
      // Read again under the volume's lock: a delete that waited for another finds it gone.
      const record = await agent.state.get(found.ID);
      if (!record) {
        throw new AgentError(
          'VOLUME_NOT_FOUND',
          `no such volume: ${found.ID}\nIt was deleted while this command waited for it; run dhv volume status to list the volumes`,
          { volumeId: found.ID },
        );
      }
      const view = toHostVolume(record, await volumeState(agent, record.ID));
      await agent
        .manager()
        .delete(deleteRequestFor(record))
        .catch((err: unknown) => {
          throw asServersReturn('HostVolume.Delete', err);
        });
      await forgetVolumeState(agent, record.ID);
      return view;
    },
    agent.signal,
  );
}

/** The servers refuse to delete a volume that allocations use, `-force` or not (Nomad's HostVolume.Delete). */
export async function refuseDeleteInUse(
  agent: Pick<AgentParts, 'volumeUsers'>,
  req: ClientDeleteRequest,
): Promise<void> {
  const users = await agent.volumeUsers({ Name: req.Name, NodeID: req.NodeID });
  if (users.length > 0)
    throw new AgentError(
      'VOLUME_IN_USE',
      `volume ${req.ID} in use by allocations: [${users.map((a) => a.ID).join(' ')}]\nStop the jobs that use it (dhv job stop <job>), then delete it again.`,
      { volumeId: req.ID, allocations: users.map((a) => a.ID) },
    );
}
