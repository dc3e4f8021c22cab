import { join } from 'node:path';
import { execa } from 'execa';
import fs from 'fs-extra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DHV_BIN as dhv, REPO_ROOT as repo, root, skipUnless, tempDir, tool } from './support/kit.js';
import { inPrivateMountNamespace } from './support/private-mount-namespace.js';

/**
 * A built plugin copied to a Nomad client whose node lives somewhere else than on the
 * build machine. A private mount namespace (root only) hides every node but one, and
 * the plugin is started the way an agent starts it: absolute path, empty environment.
 */

const REFERENCE = {
  'dhv-mkdir': join(repo, 'packages/plugin-mkdir/dist/dhv-mkdir'),
  'dhv-loopback': join(repo, 'packages/plugin-loopback/dist/dhv-loopback'),
};

/** Every node the launcher could find on this machine: each is hidden, then one is put back where asked. */
const NODES = ['/usr/bin/node', '/bin/node', '/usr/local/bin/node', process.execPath];

/**
 * Runs `plugin <operation>` under `env -i` in a new mount namespace where no node
 * exists except, when `nodeAt` is given, a bind mount of this node at that path. The
 * launcher answers an SDK plugin's fingerprint itself once it has found a node; `delete`
 * with no request reaches node, which refuses it.
 */
function startWithNodeOnlyAt(plugin: string, nodeAt: string | undefined, operation = 'fingerprint') {
  const q = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
  const script = [
    'set -e',
    // Fresh tmpfs over the places a node is put back, so nothing is written to the host.
    'mount -t tmpfs tmpfs /usr/local/bin',
    'mount -t tmpfs tmpfs /opt',
    // Keep a way to reach the real node for the bind mount below, before hiding it: in the
    // fresh /opt (a hidden folder, which no launcher path names), so nothing is left in /tmp.
    'real=/opt/.real-node',
    `mkdir "$real" && touch "$real/node" && mount --bind ${q(process.execPath)} "$real/node"`,
    ...NODES.map((path) => `if [ -e ${q(path)} ]; then mount --bind /dev/null ${q(path)}; fi`),
    ...(nodeAt
      ? [`mkdir -p "$(dirname ${q(nodeAt)})" && touch ${q(nodeAt)}`, `mount --bind "$real/node" ${q(nodeAt)}`]
      : []),
    `cd / && exec /usr/bin/env -i DHV_OPERATION=${operation} ${q(plugin)} ${operation}`,
  ].join('\n');
  return execa(...inPrivateMountNamespace(script), { reject: false });
}

describe.skipIf(
  skipUnless('starting plugins in a mount namespace that hides node', root(), tool('unshare', 'util-linux')),
)('a built plugin on a client whose node is elsewhere', () => {
  let work: string;
  let built: string;

  beforeAll(async () => {
    work = await tempDir('launcher');
    await fs.ensureSymlink(join(repo, 'packages/sdk'), join(work, 'node_modules/@dhv/sdk'));
    await fs.outputFile(
      join(work, 'plugin.ts'),
      "import { definePlugin } from '@dhv/sdk/plugin';\n" +
        "export default definePlugin({ name: 'moved', version: '3.1.0', create: (r) => ({ path: r.volumesDir, bytes: 0 }), delete: () => {} });\n",
    );
    const build = await execa(process.execPath, [dhv, 'build', 'plugin.ts', '-o', 'dist/moved', '--json'], {
      cwd: work,
      reject: false,
    });
    expect(build.exitCode, build.stderr).toBe(0);
    built = join(work, 'dist/moved');
  }, 120_000);

  afterAll(async () => {
    if (work) await fs.remove(work);
  });

  /** What node itself answers a delete with no request: proof that the launcher started it. */
  const NODE_RAN = { exitCode: 2, stdout: expect.stringMatching(/^\{"error":"invalid delete request: /) };

  it('starts a plugin built by dhv build with node only in /usr/local/bin', async () => {
    const run = await startWithNodeOnlyAt(built, '/usr/local/bin/node');
    expect(run, run.stderr).toMatchObject({ exitCode: 0, stdout: '{"version":"3.1.0"}' });
    expect(await startWithNodeOnlyAt(built, '/usr/local/bin/node', 'delete')).toMatchObject(NODE_RAN);
  });

  for (const [id, file] of Object.entries(REFERENCE)) {
    it(`starts the reference plugin ${id} with node only in /usr/local/bin`, async () => {
      const run = await startWithNodeOnlyAt(file, '/usr/local/bin/node');
      expect(run.exitCode, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({ version: expect.any(String) });
      expect(await startWithNodeOnlyAt(file, '/usr/local/bin/node', 'delete')).toMatchObject(NODE_RAN);
    });
  }

  it('starts with node only under /opt', async () => {
    const run = await startWithNodeOnlyAt(built, '/opt/node/bin/node');
    expect(run, run.stderr).toMatchObject({ exitCode: 0, stdout: '{"version":"3.1.0"}' });
    expect(await startWithNodeOnlyAt(built, '/opt/node/bin/node', 'delete')).toMatchObject(NODE_RAN);
  });

  it('says in one {"error"} line that it found no node, and where it looked', async () => {
    const run = await startWithNodeOnlyAt(built, undefined);
    expect(run.exitCode).not.toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines).toHaveLength(1);
    const { error } = JSON.parse(lines[0]!) as { error: string };
    expect(error).toMatch(/^no node executable found; looked in /);
    for (const place of [process.execPath, '/usr/local/bin/node', '/usr/bin/node', '/opt/*/bin/node'])
      expect(error).toContain(place);
  });
});
