import type { CheckResult } from './types.js';

/** How one result counts under the severity policy; every surface (exit code, table, JUnit, test API) uses this. */
export function verdictOf(
  result: Pick<CheckResult, 'status' | 'severity'>,
  strict: boolean,
): 'pass' | 'fail' | 'warn' | 'skip' {
  if (result.status === 'fail') return result.severity === 'required' ? 'fail' : 'warn';
  if (result.status === 'skip') return result.severity === 'required' && strict ? 'fail' : 'skip';
  return result.status;
}
