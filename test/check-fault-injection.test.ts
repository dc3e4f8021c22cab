import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundlePlugin } from '@dhv/sdk/build';
import { buildEnvironment } from '@dhv/sdk/client';
import { SUITE_TIMEOUT_MS, dhvCheck } from './support/check-cli.js';
import { removeTempDir, tempDir } from './support/kit.js';
import { buildPlugin, type BuiltPlugin } from './support/mkdir-plugin.js';

/**
 * `dhv check` makes an SDK plugin's create fail part way for real: it sets DHVSDK_FAIL_AT,
 * which a plugin's main() reads as `invoke({ failAt })`, and judges what each failure left.
 */
const ID = 'errors.injected-failures-leave-nothing';
const ONLY = ['--only', `discovery,environment.dhv-only,${ID}`];

let work: string;
let mkdir: BuiltPlugin;
const built: Record<string, string> = {};

beforeAll(async () => {
  work = await tempDir('fault-injection');
  for (const name of ['step-without-undo', 'step-with-undo']) {
    const entry = fileURLToPath(new URL(`./fixtures/sdk/${name}-plugin.ts`, import.meta.url));
    built[name] = (await bundlePlugin({ entry, outfile: join(work, 'plugins', name) })).outfile;
  }
  mkdir = await buildPlugin();
});
afterAll(async () => {
  await mkdir?.remove();
  if (work) await removeTempDir(work);
});

const resultOf = async (plugin: string) => {
  const run = await dhvCheck(plugin, ONLY);
  expect(run.leftovers).toEqual([]);
  return run.report.results.find((r) => r.id === ID);
};

describe('a plugin process reads DHVSDK_FAIL_AT', () => {
  const create = async (failAt: string) => {
    const volumesDir = join(work, `volumes-${failAt.replace(/\W/g, '-')}`);
    const request = { volumesDir, volumeName: 'data', volumeId: '5b8a2a5e-8f0a-4c8e-9a4f-0c7d3f2b1a99', nodeId: 'n' };
    const env = { ...buildEnvironment('create', request, built['step-without-undo']!), DHVSDK_FAIL_AT: failAt };
    const run = await promisify(execFile)(built['step-without-undo']!, ['create'], { env }).catch(
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
    return { run, left: await readdir(volumesDir).catch(() => []) };
  };

  it('fails the step it names, by number or by name, with EINJECTED', async () => {
    const second = await create('step:2');
    expect(JSON.parse(second.run.stdout)).toEqual({ error: 'injected failure at step 2 (write the label)' });
    expect(second.left).toHaveLength(1); // the first step has no undo: that is the fixture's defect
    const named = await create('step:make the folder');
    expect(JSON.parse(named.run.stdout)).toEqual({ error: 'injected failure at step 1 (make the folder)' });
    expect(named.left).toEqual([]);
  });

  it('refuses a value that names no fault point, saying the forms it takes', async () => {
    const { run } = await create('losetup');
    expect((run as { code: number }).code).toBe(2);
    expect(JSON.parse(run.stdout).error).toMatch(/DHVSDK_FAIL_AT="losetup" names no fault point; use step:<n>/);
  });
});

describe(`dhv check's ${ID}`, () => {
  it(
    'fails a create whose step has no undo, naming the step that failed and what was left',
    async () => {
      const result = await resultOf(built['step-without-undo']!);
      expect(result).toMatchObject({ status: 'fail', severity: 'recommended' });
      expect(result?.reason).toMatch(
        /made to fail at step 2 \(write the label\) \(DHVSDK_FAIL_AT=step:2\), the create left behind: volumes\/[0-9a-f-]{36}/,
      );
      expect(result?.reason).not.toMatch(/step:1/);
    },
    SUITE_TIMEOUT_MS,
  );

  it(
    'passes the same plugin once that step undoes what it made',
    async () => {
      const result = await resultOf(built['step-with-undo']!);
      expect(result).toMatchObject({ status: 'pass' });
      expect(result?.notes.join('\n')).toMatch(/each of its 2 step\(s\) and 0 tool call\(s\)/);
    },
    SUITE_TIMEOUT_MS,
  );

  it(
    'cannot judge dhv-mkdir, whose create takes no ctx.step and runs no tool',
    async () => {
      const result = await resultOf(mkdir.executable);
      expect(result).toMatchObject({ status: 'skip' });
      expect(result?.reason).toMatch(/^cannot judge: create succeeded with DHVSDK_FAIL_AT=step:1 and with tool:1/);
    },
    SUITE_TIMEOUT_MS,
  );
});
