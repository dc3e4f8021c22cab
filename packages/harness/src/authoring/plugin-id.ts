import { AuthoringError } from './errors.js';

/**
 * Letters, digits, '-' and '_'. The ID is the plugin's file name in
 * host_volume_plugin_dir and part of the node attribute
 * `plugins.host_volume.<id>.version`, so '/' and '.' are out, and so are names a shell
 * or a spec file would need to quote.
 */
const PLUGIN_ID = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const MAX_LENGTH = 128;

/** Returns the ID when a Nomad client can use it as a plugin file name; throws saying why not otherwise. */
export function validatePluginId(id: string): string {
  const refuse = (why: string) => {
    throw new AuthoringError('INVALID_PLUGIN_ID', `plugin ID ${JSON.stringify(id)} cannot be used: ${why}`, {
      pluginId: id,
    });
  };
  if (id === '') refuse('it is empty');
  if (id === 'mkdir') {
    // PROTOCOL.md: the built-in mkdir always wins; a file of that name is never run.
    refuse(
      'the agent has a built-in plugin called mkdir that shadows any file of that name; pick another, e.g. my-mkdir',
    );
  }
  if (id.length > MAX_LENGTH) refuse(`it is longer than ${MAX_LENGTH} characters`);
  if (!PLUGIN_ID.test(id)) {
    refuse(
      "use letters, digits, '-' and '_' only, starting with a letter or digit (it becomes a file name and part of the node attribute plugins.host_volume.<id>.version)",
    );
  }
  return id;
}

/** The npm package name for a generated project: npm wants lower case. */
export function packageNameFor(pluginId: string): string {
  return pluginId.toLowerCase();
}
