import { PluginFailure } from '../helpers/errors.js';

/** The PluginFailure `run` throws; anything else it throws, or no throw at all, fails the test. */
export function pluginFailureOf(run: () => unknown): PluginFailure {
  try {
    run();
  } catch (err) {
    if (err instanceof PluginFailure) return err;
    throw err;
  }
  throw new Error('expected a PluginFailure');
}
