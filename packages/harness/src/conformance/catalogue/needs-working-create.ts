/** Checks that need a create which works at all; without one they would only repeat that failure. */
export const NEEDS_WORKING_CREATE = ['environment.dhv-only', 'create.path', 'create.bytes'] as const;
