import { Flags } from '@oclif/core';

export const policyOverrideFlag = Flags.boolean({
  description:
    "Nomad's -policy-override: override soft-mandatory Sentinel policies. The simulated agent has none (Sentinel is Nomad Enterprise), so there is nothing to override, and dhv says so.",
  default: false,
});

/** What -policy-override does here: nothing, said once. */
export const POLICY_OVERRIDE_NOTE =
  '-policy-override overrides soft-mandatory Sentinel policies; the simulated agent has none (Sentinel is Nomad Enterprise), so nothing was overridden';
