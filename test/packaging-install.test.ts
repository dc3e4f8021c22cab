import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { releaseEverythingBelow } from '@dhv/sdk/host';
import { execa } from 'execa';
import fs from 'fs-extra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blocksRunBy, expectSectionsRan, runSections, runTmp, type BlockRun } from './support/docs-blocks.js';
import { writeStandIns } from './support/docs-stand-ins.js';
import { leftoversIn, textReports } from './support/check-cli.js';
import { registryCa, tempDir } from './support/kit.js';

/**
 * The four packages as a user gets them: `npm pack`ed, installed together into an empty
 * project outside this repo, and used from there: the SDK README's shell examples, whose
 * reader is in such a project, run there as written (test/support/docs-blocks.ts; the
 * contributors' pages run in a checkout, test/docs-examples.test.ts), and the READMEs'
 * TypeScript examples run there as modules (system paths become paths in a sandbox).
 */

const repo = fileURLToPath(new URL('..', import.meta.url));
const PACKAGES = ['@dhv/sdk', '@dhv/harness', '@dhv/plugin-mkdir', '@dhv/plugin-loopback'] as const;
const READMES = [
  'README.md',
  'packages/sdk/README.md',
  'packages/harness/README.md',
  'packages/plugin-mkdir/README.md',
  'packages/plugin-loopback/README.md',
];

const childEnv = {
  // Not vitest's NODE_ENV=test either: oclif takes it for a development checkout and looks for TypeScript.
  ...Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !/^(npm_|VITEST|NODE_OPTIONS$|NODE_ENV$|FORCE_COLOR$|DHV_)/i.test(key),
    ),
  ),
  ...registryCa(),
  NO_COLOR: '1',
  npm_config_prefer_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
};

interface PackEntry {
  name: string;
  filename: string;
  files: Array<{ path: string }>;
}

/** One fenced sh or ts block of a README. */
interface Example {
  readme: string;
  lang: string;
  text: string;
}

type Plan =
  { run: 'module'; as: string; before?: (sandbox: string) => Promise<void> } | { run: 'not-here'; why: string };

function examplesIn(readme: string, text: string): Example[] {
  const found: Example[] = [];
  const fence = /^```(\w+)\n([\s\S]*?)^```$/gm;
  for (const match of text.matchAll(fence)) {
    const [, lang, body] = match;
    if (lang === 'sh' || lang === 'ts') found.push({ readme, lang, text: body! });
  }
  return found;
}

/** An example is named by its README and its first line, which the table below keys on. */
const keyOf = (e: Example) => `${e.readme}: ${e.text.split('\n')[0]}`;

/** An author's directory plugin on the installed SDK (JavaScript: node runs its tests as written). */
const AUTHOR_PLUGIN = `import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mountsAt } from '@dhv/sdk/host';
import {
  definePlugin, expectCreatedPath, param, parameterSchema, pickCapacity, PluginFailure, volumePath,
} from '@dhv/sdk/plugin';

export const PARAMETERS = parameterSchema({
  mode: param.mkdirMode(),
  tier: param.choice(['fast', 'slow'], { default: 'slow', fixed: true }),
});

export default definePlugin({
  name: 'author-dir',
  version: '1.2.0',
  parameters: PARAMETERS,
  async create(request, ctx) {
    const { mode, tier } = PARAMETERS.read(request.parameters);
    const bytes = pickCapacity(request.capacityMinBytes, request.capacityMaxBytes, {
      fallback: 64n << 20n,
      granularity: 4096n,
    });
    const path = volumePath(request.volumesDir, request.volumeId);
    const mounted = await mountsAt(path);
    if (mounted.length > 0) throw new PluginFailure('EMOUNTED', \`\${path} has \${mounted[0].source} mounted on it\`);
    await mkdir(request.volumesDir, { recursive: true });
    await ctx.step(
      'directory',
      () => mkdir(path).then(() => true, (err) => { if (err.code === 'EEXIST') return false; throw err; }),
      (made) => (made ? rm(path, { recursive: true, force: true }) : undefined),
    );
    const changed = ctx.changedParameters;
    if (changed === undefined || changed.includes('mode')) await ctx.step('mode', () => chmod(path, mode));
    await ctx.step('label', () => writeFile(join(path, '.tier'), tier));
    return { path, bytes };
  },
  async delete(request) {
    const path = volumePath(request.volumesDir, request.volumeId);
    expectCreatedPath(request.createdPath, path);
    await rm(path, { recursive: true, force: true });
  },
});
`;

/** The author's own tests of the undo paths: the fault seam fails each step in turn, in process. */
const AUTHOR_UNDO_TEST = `import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import plugin from '../src/plugin.mjs';

const ID = '3c2f1a7e-8b4d-4e6f-9a0b-1c2d3e4f5a6b';
const env = (volumesDir, parameters) => ({
  DHV_OPERATION: 'create', DHV_VOLUMES_DIR: volumesDir, DHV_PLUGIN_DIR: '/opt/plugins', DHV_NAMESPACE: 'default',
  DHV_VOLUME_NAME: 'data', DHV_VOLUME_ID: ID, DHV_NODE_ID: '7d9e0f1a-2b3c-4d5e-8f6a-7b8c9d0e1f2a',
  DHV_NODE_POOL: 'default', DHV_CAPACITY_MIN_BYTES: '0', DHV_CAPACITY_MAX_BYTES: '0',
  DHV_PARAMETERS: JSON.stringify(parameters),
});

for (const step of ['directory', 'mode', 'label']) {
  test(\`a create failed at its \${step} step leaves nothing\`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'author-'));
    try {
      const run = await plugin.invoke({ argv: ['create'], env: env(dir, { mode: '0750' }), failAt: { step } });
      assert.equal(run.exitCode, 1);
      assert.match(JSON.parse(run.stdout).error, /injected failure/);
      assert.deepEqual(await readdir(dir), []);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}

test('an update may change the mode but not the tier', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'author-'));
  try {
    assert.equal((await plugin.invoke({ argv: ['create'], env: env(dir, { tier: 'fast' }) })).exitCode, 0);
    assert.equal((await plugin.invoke({ argv: ['create'], env: env(dir, { tier: 'fast', mode: '0755' }) })).exitCode, 0);
    const refused = await plugin.invoke({ argv: ['create'], env: env(dir, { tier: 'slow' }) });
    assert.match(JSON.parse(refused.stdout).error, /^parameter tier cannot change on update/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
`;

describe('the packed packages, installed together outside the repo', () => {
  let work: string;
  let project: string;
  const packs = new Map<string, PackEntry>();
  // The dhv that `npx dhv` runs in the project (its node_modules/.bin first on PATH), without npm's own start.
  const dhv = (args: string[], cwd = project) => {
    const bin = join(project, 'node_modules/.bin');
    const env = { ...childEnv, PATH: `${bin}:${process.env.PATH ?? ''}` };
    return execa(join(bin, 'dhv'), args, { cwd, env, extendEnv: false, reject: false });
  };

  beforeAll(async () => {
    work = await tempDir('packaging');
    const out = join(work, 'packs');
    await fs.ensureDir(out);
    const packed = await execa(
      'npm',
      ['pack', ...PACKAGES.flatMap((p) => ['-w', p]), '--pack-destination', out, '--json', '--loglevel=error'],
      {
        cwd: repo,
        env: childEnv,
        extendEnv: false,
      },
    );
    for (const entry of JSON.parse(packed.stdout) as PackEntry[]) packs.set(entry.name, entry);

    project = join(work, 'project');
    // No "type": "module": node would then load the extensionless plugin bundles copied below it as ESM.
    await fs.outputJson(join(project, 'package.json'), { name: 'try-dhv', version: '1.0.0', private: true });
    const install = await execa(
      'npm',
      ['install', '--loglevel=error', ...PACKAGES.map((p) => join(out, packs.get(p)!.filename))],
      {
        cwd: project,
        env: childEnv,
        extendEnv: false,
        reject: false,
      },
    );
    expect(install.exitCode, install.stderr).toBe(0);
  }, 400_000);

  afterAll(async () => {
    if (!work) return;
    await releaseEverythingBelow(work).catch(() => {});
    await fs.remove(work);
  }, 60_000);

  it('ships what each package needs and nothing else: no tests, fixtures or test seams, a LICENSE, the manifest fields', async () => {
    for (const name of PACKAGES) {
      const files = packs.get(name)!.files.map((f) => f.path);
      expect(files, name).toContain('LICENSE');
      // Templates are source by design: dhv init copies them into new projects.
      const shipped = files.filter((f) => !f.startsWith('templates/'));
      expect(
        shipped.filter((f) => /\.test\.|__fixtures__|(^|\/)testing\/|^fixtures\/|\.map$|(^|\/)src\//.test(f)),
        name,
      ).toEqual([]);
      const manifest = await fs.readJson(join(project, 'node_modules', name, 'package.json'));
      expect(manifest, name).toMatchObject({
        license: 'MPL-2.0',
        repository: { type: 'git' },
        publishConfig: { access: 'public' },
      });
      expect(await fs.readFile(join(project, 'node_modules', name, 'LICENSE'), 'utf8')).toMatch(
        /^Mozilla Public License Version 2\.0\n/,
      );
    }
    expect(packs.get('@dhv/harness')!.files.map((f) => f.path)).toContain('dist/testing.js');
  });

  it('keeps esbuild an optional peer of the SDK: only the harness, which builds, depends on it', async () => {
    const sdk = await fs.readJson(join(project, 'node_modules/@dhv/sdk/package.json'));
    expect(sdk.dependencies?.esbuild).toBeUndefined();
    expect(sdk.peerDependenciesMeta?.esbuild).toEqual({ optional: true });
    const harness = await fs.readJson(join(project, 'node_modules/@dhv/harness/package.json'));
    expect(harness.dependencies.esbuild).toBeDefined();
  });

  it('runs dhv --version from the installed harness', async () => {
    const version = await dhv(['--version']);
    expect(version.exitCode, version.stderr).toBe(0);
    expect(version.stdout).toContain('@dhv/harness/0.1.0');
  });

  it('runs dhv demo with the installed reference plugins', async () => {
    const demo = await dhv(['demo', '--json']);
    expect(demo.exitCode, demo.stderr).toBe(0);
    expect(JSON.parse(demo.stdout)).toMatchObject({ ok: true, leftBehind: [] });
  }, 180_000);

  it('loads the conformance test API from @dhv/harness/testing without the CLI', async () => {
    const load = await execa(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const m = await import('@dhv/harness/testing'); console.log(typeof m.conformanceTests)",
      ],
      {
        cwd: project,
        reject: false,
      },
    );
    expect(load.stdout, load.stderr).toBe('function');
  });

  it('carries a real plugin an author writes on it: declared parameters, a capacity rule, the host toolkit, undo steps tested without root through the fault seam, and dhv check passes', async () => {
    const author = join(project, 'author-dir');
    await fs.outputFile(join(author, 'src/plugin.mjs'), AUTHOR_PLUGIN);
    await fs.outputFile(join(author, 'test/undo.test.mjs'), AUTHOR_UNDO_TEST);
    // Nothing in the undo tests needs root: the fault seam fails each step in process.
    const tests = await execa(process.execPath, ['--test', 'test/undo.test.mjs'], {
      cwd: author,
      env: childEnv,
      extendEnv: false,
      reject: false,
    });
    expect(tests.exitCode, `${tests.stdout}\n${tests.stderr}`).toBe(0);
    expect(tests.stdout).toMatch(/# pass 4\n/);

    const build = await dhv(['build', 'src/plugin.mjs', '-o', 'dist/author-dir'], author);
    expect(build.exitCode, build.stderr).toBe(0);
    const check = await dhv(['check', 'dist/author-dir', '--skip', 'tasks', '--json'], author);
    const report = JSON.parse(check.stdout) as { results: { id: string; status: string; severity: string }[] };
    expect(
      report.results.filter((r) => r.status === 'fail').map((r) => r.id),
      check.stderr,
    ).toEqual([]);
    expect(check.exitCode).toBe(0);
    // The fault seam reached it for real: dhv check made its create fail part way and found nothing left.
    expect(report.results.find((r) => r.id === 'errors.injected-failures-leave-nothing')?.status).toBe('pass');
  }, 900_000);

  describe('the README examples whose reader has the packages installed', async () => {
    const all: Example[] = [];
    for (const readme of READMES) all.push(...examplesIn(readme, await fs.readFile(join(repo, readme), 'utf8')));
    const SDK_PAGE = blocksRunBy('test/packaging-install.test.ts');

    /**
     * The ```ts examples (the docs runner runs the ```sh ones, and writes the ts ones a later
     * block needs): as modules in the installed project, system paths moved into a sandbox.
     */
    const PLANS: Record<string, Plan> = {
      "packages/sdk/README.md: import { mkdir, rm } from 'node:fs/promises';": {
        run: 'not-here',
        why: 'the plugin the next example bundles: the docs runner saves it as scratch.ts (<!-- save as -->) in the SDK page below',
      },
      "packages/sdk/README.md: import { execPlugin, PluginError } from '@dhv/sdk/client';": {
        run: 'module',
        as: 'client.mjs',
        before: async (s) => {
          // The plugin the SDK page's shell example bundled, in the project.
          await fs.copy(join(project, 'dist/scratch'), join(s, 'opt/nomad/plugins/scratch'));
          await fs.ensureDir(join(s, 'opt/nomad/volumes'));
        },
      },
      "packages/harness/README.md: import { Agent, loadAgentConfig, readVolumeSpec } from '@dhv/harness';": {
        run: 'module',
        as: 'agent.mjs',
        before: (s) => fs.writeFile(join(s, 'test.volume.hcl'), 'type = "host"\nname = "test"\nplugin_id = "mkdir"\n'),
      },
      "packages/harness/README.md: import type { Check } from '@dhv/harness';": {
        run: 'not-here',
        why: "a check added to the vitest file above (it uses that file's plugin, describe and test)",
      },
      "packages/harness/README.md: import { FakePluginRunner } from '@dhv/harness/testing';": {
        run: 'not-here',
        why: "a fragment of the Agent example above (its config and Agent); the fake runner's own tests are packages/harness/src/agent/agent-rules.test.ts",
      },
      "packages/sdk/README.md: import { definePlugin, param, parameterSchema, pickCapacity } from '@dhv/sdk/plugin';": {
        run: 'module',
        as: 'declared-parameters.mjs',
      },
      'packages/sdk/README.md: const release = await acquireVolumeLock(`${path}.lock`, { signal: ctx.signal, folderMode: 0o711 });':
        {
          run: 'not-here',
          why: 'a fragment of a create handler; the loopback template is the whole of it, built, type-checked and passed through dhv check by test/authoring-init.test.ts',
        },
      'packages/sdk/README.md: async delete(req, ctx) {': {
        run: 'not-here',
        why: 'the delete handler of the plugin above, shown alone; the whole plugin runs as the first SDK example',
      },
      "packages/harness/README.md: import { afterAll, describe, test } from 'vitest';": {
        run: 'not-here',
        why: "the template of every generated project runs it (test/plugin.test.ts); the harness README's init example runs npm test there",
      },
    };
    const ts = all.filter((e) => e.lang === 'ts');

    it('has a plan for each ts example, so a new one cannot go untried', () => {
      expect(ts.map(keyOf).filter((key) => !(key in PLANS))).toEqual([]);
      expect(Object.keys(PLANS).filter((key) => !ts.some((e) => keyOf(e) === key))).toEqual([]);
    });

    /**
     * Its `npx dhv check dist/scratch` (the docs' two explorer sequences) is also the judgement of the
     * page's first example: every required check passes, the cleanup delete included, and dhv check
     * leaves nothing in its TMPDIR, the run's own.
     */
    it.sequential(
      `runs the SDK README as written in the installed project: ${SDK_PAGE.length} block(s), its example passing every required check`,
      async () => {
        const bin = join(work, 'bin');
        await writeStandIns(bin);
        const run: BlockRun = { dir: join(work, 'sdk-page'), checkout: project, bin, namespace: false };
        const results = await runSections(SDK_PAGE, run);
        expectSectionsRan(results, SDK_PAGE, expect);
        const output = results.map((r) => r.output).join('\n');
        const reports = textReports(output);
        expect(reports, output).toHaveLength(1);
        expect(reports[0]!.requiredFailed, reports[0]!.verdict).toBe(0);
        expect(reports[0]!.passed, output).toContain('delete.cleanup-call');
        expect(await leftoversIn(runTmp(run), { tmpdir: true })).toEqual({
          leftovers: [],
          leftoverMounts: [],
          leftoverLoopDevices: [],
        });
      },
      300_000,
    );

    /** System paths move into the sandbox. */
    const localise = (text: string, sandbox: string) =>
      text.replace(/(^|[\s"'=(])\/(opt|tmp|srv)\//gm, `$1${sandbox}/$2/`);

    for (const example of ts) {
      const plan = PLANS[keyOf(example)]!;
      if (plan.run !== 'module') continue;
      it.sequential(keyOf(example), async () => {
        const sandbox = join(project, 'examples', plan.as.replace(/\W+/g, '-'));
        for (const dir of ['tmp', 'srv', 'opt']) await fs.ensureDir(join(sandbox, dir));
        try {
          await plan.before?.(sandbox);
          const code = localise(example.text, sandbox);
          await fs.writeFile(join(sandbox, plan.as), code);
          const env = { ...childEnv, DHV_DATA_DIR: join(sandbox, '.dhv') };
          const result = await execa(process.execPath, [plan.as], {
            cwd: sandbox,
            env,
            extendEnv: false,
            reject: false,
          });
          expect(result.exitCode, `${code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`).toBe(0);
        } finally {
          await releaseEverythingBelow(sandbox).catch(() => {});
        }
      });
    }
  });
});
