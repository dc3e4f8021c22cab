import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { releaseEverythingBelow } from '@dhv/sdk/host';
import { execa } from 'execa';
import fs from 'fs-extra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loopDevices, skipUnless } from './support/kit.js';

/**
 * The four packages as a user gets them: `npm pack`ed, installed together into an empty
 * project outside this repo, and used from there, with every example of every README
 * run against the installed copies (paths into the checkout become paths into
 * node_modules, system paths become paths in a sandbox).
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

/** One fenced sh or ts block of a README, and how it runs outside the checkout. */
interface Example {
  readme: string;
  lang: string;
  text: string;
}

type Plan =
  | {
      run: 'sh';
      drop?: RegExp[];
      /** Applied after the paths are localised: stands in for what needs a Nomad cluster. */
      then?: (text: string, sandbox: string) => string;
      before?: (sandbox: string) => Promise<void>;
      timeoutMs?: number;
      needsRoot?: boolean;
      /** Needs nothing the README's earlier examples made: runs in a folder of its own, beside them. */
      alone?: boolean;
    }
  | { run: 'module'; as: string; before?: (sandbox: string) => Promise<void> }
  | { run: 'save'; as: string; why: string }
  | { run: 'not-here'; why: string };

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

describe('the packed packages, installed together outside the repo', () => {
  let work: string;
  let project: string;
  const packs = new Map<string, PackEntry>();
  const dhv = (args: string[], cwd = project) =>
    execa('npx', ['--no-install', 'dhv', ...args], { cwd, env: childEnv, extendEnv: false, reject: false });

  beforeAll(async () => {
    work = await fs.mkdtemp(join(tmpdir(), 'dhv-packaging-'));
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

  describe('every example of every README', async () => {
    const all: Example[] = [];
    for (const readme of READMES) all.push(...examplesIn(readme, await fs.readFile(join(repo, readme), 'utf8')));

    const copyPlugin = (id: 'dhv-mkdir' | 'dhv-loopback', to: string) =>
      fs.copy(join(project, `node_modules/@dhv/plugin-${id.slice(4)}/dist/${id}`), to);

    const PLANS: Record<string, Plan> = {
      'README.md: npm ci && npm run demo     # the whole story: create, fingerprint, restart with --reboot, delete': {
        run: 'sh',
        // The checkout's own scripts: outside it there is nothing to test, type-check or lint.
        drop: [/^npm test\b.*$/m, /^npm run typecheck\b.*$/m, /^npm run lint\b.*$/m],
        timeoutMs: 180_000,
      },
      'README.md: npm ci && npm run pack     # writes dhv-0.1.0.tgz: the dhv CLI with the SDK, the reference plugins and every dependency inside':
        {
          run: 'not-here',
          why: 'the one-file install: test/docs-examples.test.ts runs it, and test/packaging-tarball.test.ts tests it',
        },
      'README.md: npm install -g ./dhv-0.1.0.tgz   # runs no install script': {
        run: 'not-here',
        why: 'the one-file install: test/docs-examples.test.ts runs it, and test/packaging-tarball.test.ts tests it',
      },
      'README.md: npm test                   # builds everything and runs every test': {
        run: 'not-here',
        why: "the checkout's own checks",
      },
      'README.md: npx dhv check packages/plugin-mkdir/dist/dhv-mkdir          # conformance suite': {
        run: 'sh',
        timeoutMs: 180_000,
      },
      "packages/sdk/README.md: import { mkdir, rm } from 'node:fs/promises';": {
        run: 'save',
        as: 'scratch.ts',
        why: 'the plugin the next example bundles',
      },
      'packages/sdk/README.md: npx dhv-bundle scratch.ts dist/scratch            # or `dhv build scratch.ts -o dist/scratch`':
        { run: 'sh', timeoutMs: 180_000 },
      "packages/sdk/README.md: import { execPlugin, PluginError } from '@dhv/sdk/client';": {
        run: 'module',
        as: 'client.mjs',
        before: async (s) => {
          await fs.copy(join(s, 'dist/scratch'), join(s, 'opt/nomad/plugins/scratch'));
          await fs.ensureDir(join(s, 'opt/nomad/volumes'));
        },
      },
      'packages/harness/README.md: npm ci && npm run build                                  # at the repository root': {
        run: 'sh',
        timeoutMs: 240_000,
      },
      'packages/harness/README.md: npx dhv plugin run packages/plugin-mkdir/dist/dhv-mkdir fingerprint': {
        run: 'sh',
        needsRoot: true,
        before: async (s) => {
          await copyPlugin('dhv-loopback', join(s, 'opt/plugins/dhv-loopback'));
          await copyPlugin('dhv-mkdir', join(s, 'my-plugin'));
        },
        timeoutMs: 120_000,
      },
      "packages/harness/README.md: import { Agent, loadAgentConfig, readVolumeSpec } from '@dhv/harness';": {
        run: 'module',
        as: 'agent.mjs',
        before: (s) => fs.writeFile(join(s, 'test.volume.hcl'), 'type = "host"\nname = "test"\nplugin_id = "mkdir"\n'),
      },
      'packages/harness/README.md: npm run build': {
        run: 'sh',
        needsRoot: true,
        // The first check is README.md's own example, the same command on the same installed plugin.
        drop: [/^npm run build$/m, /^npx dhv check packages\/plugin-mkdir\/dist\/dhv-mkdir .*$/m],
        before: (s) => copyPlugin('dhv-mkdir', join(s, 'my-plugin')),
        timeoutMs: 400_000,
      },
      "packages/harness/README.md: import type { Check } from '@dhv/harness';": {
        run: 'not-here',
        why: "a check added to the vitest file above (it uses that file's plugin, describe and test)",
      },
      "packages/harness/README.md: import { FakePluginRunner } from '@dhv/harness/testing';": {
        run: 'not-here',
        why: "a fragment of the Agent example above (its config and Agent); the fake runner's own tests are packages/harness/src/agent/agent-rules.test.ts",
      },
      'packages/sdk/README.md: async delete(req, ctx) {': {
        run: 'not-here',
        why: 'the delete handler of the plugin above, shown alone; the whole plugin runs as the first SDK example',
      },
      "packages/harness/README.md: import { afterAll, describe, test } from 'vitest';": {
        run: 'not-here',
        why: 'the template of every generated project runs it (test/plugin.test.ts); the init example below runs npm test there',
      },
      'packages/harness/README.md: npx dhv init my-plugin --template mkdir   # packs this @dhv/sdk and @dhv/harness into my-plugin/vendor/':
        {
          run: 'sh',
          // The examples above use ./my-plugin for a plugin file; this one makes a project of that name.
          alone: true,
          timeoutMs: 500_000,
        },
      'packages/plugin-mkdir/README.md: npm ci && npm run build          # at the root of this repository; builds packages/plugin-mkdir/dist/dhv-mkdir':
        {
          run: 'sh',
          needsRoot: true,
          drop: [/^sudo systemctl .*$/m],
          then: (text, s) =>
            text.replace(
              /^nomad volume create (\S+)$/m,
              `npx --no-install dhv volume create $1 --plugin-dir ${s}/opt/nomad/data/host_volume_plugins`,
            ),
          timeoutMs: 180_000,
        },
      'packages/plugin-loopback/README.md: npm ci && npm run build        # makes packages/plugin-loopback/dist/dhv-loopback, one file':
        {
          run: 'sh',
          needsRoot: true,
          then: (text, s) =>
            text.replace(
              /^nomad volume create (\S+)$/m,
              `npx --no-install dhv volume create $1 --plugin-dir ${s}/opt/nomad/data/host_volume_plugins`,
            ),
          timeoutMs: 180_000,
        },
    };

    it('has a plan for each of them, so a new example cannot go untried', () => {
      expect(all.map(keyOf).filter((key) => !(key in PLANS))).toEqual([]);
      expect(Object.keys(PLANS).filter((key) => !all.some((e) => keyOf(e) === key))).toEqual([]);
    });

    /** Paths into the checkout become the installed packages; system paths move into the sandbox. */
    const localise = (text: string, sandbox: string) =>
      text
        .replace(/^npm ci && npm run demo\b/m, 'npx dhv demo')
        .replace(/^npm ci && npm run build\b/m, ':')
        .replace(/(^|[\s"'=(])\/(opt|tmp|srv)\//gm, `$1${sandbox}/$2/`)
        .replace(/packages\/plugin-(mkdir|loopback)\/dist\//g, `${project}/node_modules/@dhv/plugin-$1/dist/`)
        .replace(/^sudo /gm, '')
        .replace(/(^|&& |\| )npx /gm, '$1npx --no-install ');

    /**
     * Examples of one README run in order in one folder, as a reader would type them; the
     * READMEs (and the examples that run alone) run side by side, each in its own folder.
     */
    const groups = new Map<string, Example[]>();
    for (const example of all) {
      const plan = PLANS[keyOf(example)];
      if (!plan || plan.run === 'not-here') continue;
      const group = plan.run === 'sh' && plan.alone ? keyOf(example) : example.readme;
      groups.set(group, [...(groups.get(group) ?? []), example]);
    }
    for (const [group, examples] of groups) {
      describe(group, { concurrent: true }, () => {
        const saved = new Map<string, string>();
        for (const example of examples) {
          const plan = PLANS[keyOf(example)] as Exclude<Plan, { run: 'not-here' }>;
          const needsRoot = plan.run === 'sh' && plan.needsRoot;
          const skip = needsRoot && skipUnless(`the README example ${keyOf(example)}`, loopDevices());
          (skip ? it.skip : it.sequential)(
            keyOf(example),
            async () => {
              const sandbox = join(project, 'examples', group.replace(/\W+/g, '-').slice(0, 100));
              for (const dir of ['tmp', 'srv', 'opt/nomad/data/host_volume_plugins'])
                await fs.ensureDir(join(sandbox, dir));
              for (const [name, text] of saved) await fs.writeFile(join(sandbox, name), text);
              const env = { ...childEnv, DHV_DATA_DIR: join(sandbox, '.dhv') };
              try {
                if (plan.run === 'save') {
                  saved.set(plan.as, example.text);
                  return;
                }
                await plan.before?.(sandbox);
                const script =
                  plan.run === 'sh'
                    ? (plan.drop ?? []).reduce((text, drop) => text.replace(drop, ''), example.text)
                    : example.text;
                const code =
                  plan.run === 'sh' && plan.then
                    ? plan.then(localise(script, sandbox), sandbox)
                    : localise(script, sandbox);
                const result =
                  plan.run === 'sh'
                    ? // stdin not a socket: bash reads /etc/bash.bashrc when it thinks sshd started it.
                      await execa('/bin/bash', ['-euo', 'pipefail', '-c', code], {
                        cwd: sandbox,
                        env,
                        extendEnv: false,
                        reject: false,
                        stdin: 'ignore',
                      })
                    : await fs
                        .writeFile(join(sandbox, plan.as), code)
                        .then(() =>
                          execa(process.execPath, [plan.as], { cwd: sandbox, env, extendEnv: false, reject: false }),
                        );
                expect(result.exitCode, `${code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`).toBe(0);
              } finally {
                await releaseEverythingBelow(sandbox).catch(() => {});
              }
            },
            (plan.run === 'sh' && plan.timeoutMs) || 120_000,
          );
        }
      });
    }
  });
});
