import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultOutfile } from './default-output.js';
import { packageNameFor, validatePluginId } from './plugin-id.js';
import { removeTempDir, tempDir } from '../../../../test/support/kit.js';

/** The plugin ID `dhv init` and `dhv build` accept: a file name in host_volume_plugin_dir and part of a node attribute. */

let dir = '';
afterEach(async () => {
  if (dir) await removeTempDir(dir);
  dir = '';
});

const refusal = (id: string) => {
  try {
    validatePluginId(id);
  } catch (err) {
    return err as Error & { code: string };
  }
  throw new Error(`${JSON.stringify(id)} was accepted`);
};

describe('a plugin ID', () => {
  it('is letters, digits, dashes and underscores, starting with a letter or digit, up to 128 of them', () => {
    for (const id of ['fast-disk', 'My_Plugin2', '7zip', 'x'.repeat(128)]) expect(validatePluginId(id)).toBe(id);
  });

  it('is never mkdir, which the built-in plugin shadows, and says what to pick instead', () => {
    const err = refusal('mkdir');
    expect(err.code).toBe('INVALID_PLUGIN_ID');
    expect(err.message).toBe(
      'plugin ID "mkdir" cannot be used: the agent has a built-in plugin called mkdir that shadows any file of that name; pick another, e.g. my-mkdir',
    );
  });

  it('refuses an empty name, a long one and one a shell or the node attribute would trip on, saying why', () => {
    expect(refusal('').message).toBe('plugin ID "" cannot be used: it is empty');
    expect(refusal('x'.repeat(129)).message).toMatch(/ cannot be used: it is longer than 128 characters$/);
    for (const id of ['a.b', 'a/b', '-lead', '_lead', 'sp ace', 'caf\u00e9'])
      expect(refusal(id).message).toBe(
        `plugin ID ${JSON.stringify(id)} cannot be used: use letters, digits, '-' and '_' only, starting with a letter or digit ` +
          '(it becomes a file name and part of the node attribute plugins.host_volume.<id>.version)',
      );
  });

  it('becomes an npm package name in lower case', () => {
    expect(packageNameFor('My_Plugin2')).toBe('my_plugin2');
  });
});

describe("dhv build's default output", () => {
  async function project(name: unknown): Promise<string> {
    dir = await tempDir('default-output');
    await mkdir(join(dir, 'src', 'deep'), { recursive: true });
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name }));
    return join(dir, 'src', 'deep', 'plugin.ts');
  }

  it('is dist/<package name> in the nearest project that names one, an npm scope left out', async () => {
    expect(await defaultOutfile(await project('@acme/fast-disk'))).toBe(join(dir, 'dist', 'fast-disk'));
    await writeFile(join(dir, 'src', 'package.json'), JSON.stringify({ private: true }));
    expect(await defaultOutfile(join(dir, 'src', 'deep', 'plugin.ts'))).toBe(join(dir, 'dist', 'fast-disk'));
  });

  it('is refused, asking for -o, when the package name cannot be a plugin ID', async () => {
    const entry = await project('mkdir');
    await expect(defaultOutfile(entry)).rejects.toMatchObject({
      code: 'NO_OUTPUT',
      exitCode: 2,
      message:
        'plugin ID "mkdir" cannot be used: the agent has a built-in plugin called mkdir that shadows any file of that name; pick another, e.g. my-mkdir ' +
        `(it is the name in ${join(dir, 'package.json')}, which names the default output); give the output with -o dist/<plugin ID>`,
    });
  });
});
