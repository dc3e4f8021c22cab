import { Flags } from '@oclif/core';
import { UsageError } from '../../errors/dhv-error.js';
import { ALL_NAMESPACES } from '../../agent/volume-lookup.js';

/** Nomad's `-namespace`: the flag, else `NOMAD_NAMESPACE`, else `default`; `*` means every namespace where a lookup allows it. */
export const namespaceFlag = Flags.string({
  description:
    "The namespace of the volumes looked up and listed (Nomad's -namespace; '*' for all). Default: $NOMAD_NAMESPACE, else default.",
  env: 'NOMAD_NAMESPACE',
  default: 'default',
});

/**
 * The namespace a new volume goes to: the spec's, else the one of -namespace (the servers
 * use the request's namespace for a volume that names none). The spec reader fills in
 * `default` for a spec without one, so a spec saying `namespace = "default"` gives way to -namespace too.
 */
export function namespaceForSpec(specNamespace: string, flagNamespace: string): string {
  const namespace = specNamespace !== '' && specNamespace !== 'default' ? specNamespace : flagNamespace;
  if (namespace === ALL_NAMESPACES) {
    throw new UsageError(
      `invalid namespace "${ALL_NAMESPACES}": a volume is created in one namespace\nSet namespace in the spec or give -namespace <name>.`,
      'SPEC_INVALID',
      { namespace },
    );
  }
  return namespace;
}
