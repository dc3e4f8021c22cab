import { DhvError } from '../errors/dhv-error.js';
import { EXIT_CODES } from '../errors/exit-codes.js';
import { AREAS, type Check } from './types.js';

export class UnknownCheckError extends DhvError {
  readonly code = 'UNKNOWN_CHECK';
  override readonly exitCode = EXIT_CODES.usage;
  constructor(readonly unknown: string[]) {
    super(
      `no check or area named ${unknown.map((u) => JSON.stringify(u)).join(', ')}; run \`dhv check --list\` to see them`,
      { unknown },
    );
  }
}

const matches = (check: Check, selector: string) => check.id === selector || check.area === selector;

/**
 * The checks to run: those named by `only` (IDs or areas; all when empty), minus
 * those named by `skip`. Every selector must name something, so a typo never
 * silently runs nothing.
 */
export function selectChecks(
  catalogue: readonly Check[],
  only: readonly string[] = [],
  skip: readonly string[] = [],
): Check[] {
  const unknown = [...only, ...skip].filter(
    (s) => !(AREAS as readonly string[]).includes(s) && !catalogue.some((c) => c.id === s),
  );
  if (unknown.length > 0) throw new UnknownCheckError(unknown);
  return catalogue.filter(
    (c) => (only.length === 0 || only.some((s) => matches(c, s))) && !skip.some((s) => matches(c, s)),
  );
}
