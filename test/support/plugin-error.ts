import { expect } from 'vitest';
import { PluginError } from '@dhv/sdk/client';

/** Awaits a plugin call that must fail, asserts it failed with a PluginError, and returns that error. */
export async function expectPluginError(run: Promise<unknown>, message?: string): Promise<PluginError> {
  const err = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, message).toBeInstanceOf(PluginError);
  return err as PluginError;
}
