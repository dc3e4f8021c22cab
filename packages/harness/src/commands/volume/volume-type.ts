import { Flags } from '@oclif/core';
import { AgentError } from '../../errors/agent-error.js';

/** Nomad's `-type`: `host` for dynamic host volumes; dhv has no others, so it is the default. */
export const typeFlag = Flags.string({
  description: "Volume type, as Nomad's -type: only host (the default here; Nomad's default is csi).",
  default: 'host',
});

export function checkVolumeType(type: string): void {
  if (type.toLowerCase() === 'host') return;
  throw new AgentError(
    'SPEC_INVALID',
    `No such volume type ${JSON.stringify(type)}\ndhv simulates dynamic host volumes only: use -type host, or leave -type out.`,
    { type },
  );
}
