/**
 * The version of the shapes of dhv's own JSON documents: the camelCase ones (check, plugin
 * run, init, build, demo, version, every command's error) and the PascalCase reports of the
 * Nomad-shaped commands that are not Nomad's own objects (volume create, agent fingerprint,
 * job run...). A field removed or changed in meaning makes it dhv/v2;
 * fields are added within a version. The README's "JSON output" says which documents carry it.
 */
export const DHV_API_VERSION = 'dhv/v1';

/** One of dhv's own documents, headed as kubectl heads its objects: `apiVersion`, then `kind`. */
export function dhvDocument<T extends object>(kind: string, body: T): { apiVersion: string; kind: string } & T {
  return { apiVersion: DHV_API_VERSION, kind, ...body };
}
