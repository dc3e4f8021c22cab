import type { Check } from '../types.js';
import { agentGoneChecks } from './agent-gone.js';
import { budgetChecks } from './budgets.js';
import { createChecks } from './create.js';
import { NEEDS_WORKING_CREATE } from './needs-working-create.js';
import { deleteChecks } from './delete.js';
import { discoveryChecks } from './discovery.js';
import { environmentChecks } from './environment.js';
import { errorChecks } from './errors.js';
import { injectedFaultChecks } from './injected-faults.js';
import { exploreChecks } from '../explore/checks.js';
import { safetyChecks } from './safety.js';
import { stdioChecks } from './stdio.js';
import { taskChecks } from './tasks.js';

/** Every check, in the order they run: a check only needs checks listed before it. */
export const CATALOGUE: readonly Check[] = [
  ...discoveryChecks,
  ...environmentChecks,
  ...createChecks,
  ...agentGoneChecks,
  ...deleteChecks,
  ...errorChecks,
  ...injectedFaultChecks,
  ...stdioChecks,
  ...budgetChecks,
  ...safetyChecks,
  ...taskChecks,
  ...exploreChecks(NEEDS_WORKING_CREATE),
];
