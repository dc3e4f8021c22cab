import type { VolumeSpec } from '../../volume-specs/volume-spec.js';
import type { VolumeRecord } from '../state/client-state.js';
import { AgentError } from '../../errors/agent-error.js';
import { multierrorText } from '../../go/multierror.js';

/**
 * The servers' update rules (Nomad's validateVolumeUpdate and HostVolume.ValidateUpdate):
 * a spec with an `id` updates that volume, which must exist, and may not move it to
 * another node or pool nor shrink it below what was provisioned (the capacity rule).
 */
export function existingForUpdate(spec: VolumeSpec, existing: VolumeRecord | undefined): VolumeRecord | undefined {
  if (!spec.id) return undefined;
  if (!existing) {
    throw new AgentError(
      'VOLUME_NOT_FOUND',
      `cannot update volume "${spec.id}": volume does not exist\nLeave id out of the spec to create a new volume.`,
      { volumeId: spec.id },
    );
  }
  const problem = updateProblem(spec, existing);
  if (problem) throw problem;
  return existing;
}

/** Nomad's ValidateUpdate: what an update may not change, all reported at once. */
export function updateProblem(spec: VolumeSpec, existing: VolumeRecord): AgentError | undefined {
  const problems: Error[] = [];
  if (spec.nodeId !== '' && spec.nodeId !== existing.CreateReq.NodeID)
    problems.push(new Error('node ID cannot be updated'));
  if (spec.nodePool !== '' && spec.nodePool !== existing.Volume.NodePool)
    problems.push(new Error('node pool cannot be updated'));
  if (spec.capacityMaxBytes !== 0n && spec.capacityMaxBytes < existing.Volume.CapacityBytes) {
    problems.push(
      new Error(
        `capacity_max (${spec.capacityMaxBytes}) cannot be less than existing provisioned capacity (${existing.Volume.CapacityBytes})`,
      ),
    );
  }
  if (problems.length === 0) return undefined;
  const joined = multierrorText(problems.map((p) => p.message));
  return new AgentError('VOLUME_UPDATE_REFUSED', `validating volume "${spec.id}" update failed: ${joined}`, {
    volumeId: spec.id,
    problems: problems.map((p) => p.message),
  });
}
