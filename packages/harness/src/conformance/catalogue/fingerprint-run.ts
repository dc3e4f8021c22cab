import { buildEnvironment, fingerprintRequest, type PluginRun } from '@dhv/sdk/client';
import type { CheckContext } from '../types.js';

/**
 * Discovery gives a fingerprint 1 s; the checks that judge what a fingerprint says
 * allow it much longer, so that a slow plugin fails only the check about speed.
 */
const PATIENT_TIMEOUT_MS = 10_000;

/** One fingerprint run with exactly the agent's environment, shared by the discovery checks. */
export function fingerprintRun(ctx: CheckContext): Promise<PluginRun> {
  return ctx.shared('fingerprint', (c) =>
    c.runRaw(['fingerprint'], buildEnvironment('fingerprint', fingerprintRequest(), c.plugin), {
      timeoutMs: PATIENT_TIMEOUT_MS,
    }),
  );
}
