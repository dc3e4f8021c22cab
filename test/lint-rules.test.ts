import { execFile } from 'node:child_process';
import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { ESLint } from 'eslint';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTempDir, tempDir } from './support/kit.js';

// The lint rules judged on a small tree of their own, so a rule that stopped matching
// (a renamed folder, a broken pattern) fails here rather than passing everything.
const repo = fileURLToPath(new URL('..', import.meta.url));
const KNIP = join(repo, 'node_modules/knip/bin/knip.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(script: string, args: string[], cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [script, ...args], { cwd, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

let tree: string;
beforeEach(async () => {
  tree = await tempDir('lint-rules');
  await writeFiles({
    'tsconfig.base.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } }),
    'packages/sdk/src/protocol/request.ts': 'export const request = 1;\n',
    'packages/sdk/src/runtime/define-plugin.ts':
      "import { request } from '../protocol/request.js';\nexport const run = request;\n",
    'packages/sdk/src/client/exec-plugin.ts':
      "import { request } from '../protocol/request.js';\nexport const exec = request;\n",
    'packages/plugin-x/src/plugin.ts':
      "import { run } from '../../sdk/src/runtime/define-plugin.js';\nexport default run;\n",
    'packages/harness/src/errors/agent-error.ts': 'export class AgentError extends Error {}\n',
    'packages/harness/src/config/agent-config.ts':
      "import { AgentError } from '../errors/agent-error.js';\nexport const c = AgentError;\n",
    'packages/harness/src/agent/agent.ts': "import { c } from '../config/agent-config.js';\nexport const a = c;\n",
    'packages/harness/src/presenters/format-volume.ts': "import { a } from '../agent/agent.js';\nexport const f = a;\n",
    'packages/sdk/src/client.ts': "export { exec } from './client/exec-plugin.js';\n",
    'packages/harness/src/runner/process-runner.ts':
      "import { exec } from '../../../sdk/src/client.js';\nexport const runner = exec;\n",
    'packages/harness/src/commands/status.ts':
      "import { f } from '../presenters/format-volume.js';\nimport { runner } from '../runner/process-runner.js';\nexport const s = [f, runner];\n",
  });
});
afterEach(async () => {
  await removeTempDir(tree);
});

async function writeFiles(files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(tree, path)), { recursive: true });
    await writeFile(join(tree, path), text);
  }
}

/** The rules of .dependency-cruiser.cjs, as `depcruise --config` reads them. */
const options = await extractDepcruiseOptions(join(repo, '.dependency-cruiser.cjs'));

/**
 * The rules broken in the tree, judged in this process: the subject is the rules, not
 * depcruise's command line, and one depcruise process a test was most of this file's time.
 * cruise() takes paths relative to the current directory, as `depcruise packages` run in
 * the tree does.
 */
async function violations(): Promise<string[]> {
  return [...new Set((await violatingImports()).map((v) => v.split(':')[0]!))].sort();
}

/** Each import a rule refuses, as `<rule>: <from> → <to>`, sorted. */
async function violatingImports(): Promise<string[]> {
  const cwd = process.cwd();
  process.chdir(tree);
  try {
    const { output } = await cruise(
      ['packages'],
      { ...options, outputType: 'json' },
      {},
      { tsConfig: extractTSConfig(join(tree, 'tsconfig.base.json')) },
    );
    const result = (typeof output === 'string' ? JSON.parse(output) : output) as ICruiseResult;
    return result.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
  } finally {
    process.chdir(cwd);
  }
}

describe('the dependency rules (npm run lint:deps)', () => {
  it('pass a tree whose arrows all point the allowed way', async () => {
    expect(await violations()).toEqual([]);
  });

  it('fail a plugin that imports the harness', async () => {
    await writeFiles({
      'packages/plugin-x/src/testing.ts': "export { s } from '../../harness/src/commands/status.js';\n",
    });
    expect(await violations()).toEqual(['plugins-not-harness']);
  });

  it('fail the protocol importing a side, and the runtime importing the client', async () => {
    await writeFiles({
      'packages/sdk/src/client/timeouts.ts': 'export const timeout = 1;\n',
      'packages/sdk/src/protocol/response.ts': "export { timeout } from '../client/timeouts.js';\n",
      'packages/sdk/src/runtime/validation.ts': "export { timeout } from '../client/timeouts.js';\n",
    });
    // protocol -> client also closes a folder cycle, since the client imports the protocol.
    expect(await violations()).toEqual(expect.arrayContaining(['protocol-knows-neither-side', 'runtime-not-client']));
  });

  it('fail the agent model importing a presenter, and the catalogue importing the agent', async () => {
    await writeFiles({
      'packages/harness/src/agent/restore.ts': "export { f } from '../presenters/format-volume.js';\n",
      'packages/harness/src/conformance/scratch-dirs.ts': "export { a } from '../agent/agent.js';\n",
    });
    expect(await violations()).toEqual(expect.arrayContaining(['conformance-not-agent', 'model-knows-no-cli']));
  });

  it("fail a module outside the agent's state store importing the data dir's layout", async () => {
    await writeFiles({
      'packages/harness/src/agent/state/layout.ts': "export const layout = 'client';\n",
      'packages/harness/src/agent/state/store.ts':
        "import { layout } from './layout.js';\nexport const store = layout;\n",
      'packages/harness/src/agent/orphans.ts': "export { layout } from './state/layout.js';\n",
    });
    expect(await violations()).toEqual(['state-layout-only-in-store']);
  });

  it("fail a command importing the agent's state store, and let it import what agent/ offers", async () => {
    await writeFiles({
      'packages/harness/src/agent/state/node-identity.ts': 'export const loadNodeId = String;\n',
      'packages/harness/src/agent/state/store.ts': "export { loadNodeId } from './node-identity.js';\n",
      'packages/harness/src/agent/node-identity.ts': "export { loadNodeId } from './state/store.js';\n",
      'packages/harness/src/commands/plugin/run.ts': "export { loadNodeId } from '../../agent/node-identity.js';\n",
      'packages/harness/src/commands/agent/gc.ts': "export { loadNodeId } from '../../agent/state/node-identity.js';\n",
    });
    expect(await violatingImports()).toEqual([
      'commands-through-the-agent: packages/harness/src/commands/agent/gc.ts → packages/harness/src/agent/state/node-identity.ts',
    ]);
  });

  it("fail the harness's go/ importing another folder of the harness, and let every folder import it", async () => {
    await writeFiles({
      'packages/harness/src/go/multierror.ts': 'export const multierrorText = String;\n',
      'packages/harness/src/presenters/joined.ts': "export { multierrorText } from '../go/multierror.js';\n",
      'packages/harness/src/go/os.ts': "export { c } from '../config/agent-config.js';\n",
    });
    expect(await violations()).toEqual(['go-is-a-leaf']);
  });

  it("fail an import of @oclif/core into the agent's code", async () => {
    await writeFiles({ 'packages/harness/src/agent/restore.ts': "export { Command } from '@oclif/core';\n" });
    // The tree has no node_modules, so the import also does not resolve; the rule fires either way.
    expect(await violations()).toEqual(expect.arrayContaining(['agent-knows-no-cli-framework']));
  });

  it("fail any module outside the SDK's client/ importing its spawning code, the harness's runner included", async () => {
    await writeFiles({
      'packages/harness/src/agent/volume-manager.ts':
        "import { exec } from '../../../sdk/src/client/exec-plugin.js';\nexport const m = exec;\n",
      'packages/harness/src/runner/raw-runner.ts':
        "import { exec } from '../../../sdk/src/client/exec-plugin.js';\nexport const r = exec;\n",
      'packages/sdk/src/helpers/spawn.ts': "import { exec } from '../client/exec-plugin.js';\nexport const h = exec;\n",
      'packages/sdk/src/client/process-runner.ts': "import { exec } from './exec-plugin.js';\nexport const p = exec;\n",
    });
    expect(await violatingImports()).toEqual([
      'sdk-client-only-spawns: packages/harness/src/agent/volume-manager.ts → packages/sdk/src/client/exec-plugin.ts',
      'sdk-client-only-spawns: packages/harness/src/runner/raw-runner.ts → packages/sdk/src/client/exec-plugin.ts',
      'sdk-client-only-spawns: packages/sdk/src/helpers/spawn.ts → packages/sdk/src/client/exec-plugin.ts',
    ]);
  });

  it('fail package code importing the test kit', async () => {
    await writeFiles({
      'test/support/seed.ts': 'export const seed = 1;\n',
      'packages/sdk/src/runtime/seed.ts': "export { seed } from '../../../../test/support/seed.js';\n",
    });
    expect(await violations()).toEqual(['tests-only-import-the-kit']);
  });

  it('fail code that ships importing a test seam, and let tests and the testing entry import them', async () => {
    await writeFiles({
      'packages/harness/src/runner/fake-runner.ts': 'export const fake = 1;\n',
      'packages/harness/src/test-seams/seed-volumes.ts': 'export const seed = 1;\n',
      'packages/harness/src/__fixtures__/volume-spec.ts': 'export const spec = 1;\n',
      'packages/harness/src/testing.ts':
        "export { fake } from './runner/fake-runner.js';\nexport { seed } from './test-seams/seed-volumes.js';\n",
      'packages/harness/src/agent/agent.test.ts':
        "export { fake } from '../runner/fake-runner.js';\nexport { spec } from '../__fixtures__/volume-spec.js';\n",
    });
    expect(await violations()).toEqual([]);

    await writeFiles({
      'packages/harness/src/agent/restore.ts':
        "export { fake } from '../runner/fake-runner.js';\nexport { seed } from '../test-seams/seed-volumes.js';\n",
      'packages/harness/src/config/defaults.ts': "export { spec } from '../__fixtures__/volume-spec.js';\n",
      'packages/harness/src/index.ts': "export { seed } from './testing.js';\n",
    });
    const rule = 'production-imports-no-test-seam';
    expect(await violatingImports()).toEqual([
      `${rule}: packages/harness/src/agent/restore.ts → packages/harness/src/runner/fake-runner.ts`,
      `${rule}: packages/harness/src/agent/restore.ts → packages/harness/src/test-seams/seed-volumes.ts`,
      `${rule}: packages/harness/src/config/defaults.ts → packages/harness/src/__fixtures__/volume-spec.ts`,
      `${rule}: packages/harness/src/index.ts → packages/harness/src/testing.ts`,
    ]);
  });

  it('follow an @dhv/* import into the sources before anything is built', async () => {
    await writeFiles({
      'packages/harness/package.json': JSON.stringify({
        name: '@dhv/harness',
        type: 'module',
        exports: { '.': { '@dhv/source': './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' } },
      }),
      'packages/harness/src/index.ts': "export { s } from './commands/status.js';\n",
      'packages/plugin-x/src/testing.ts': "export { s } from '@dhv/harness';\n",
    });
    await mkdir(join(tree, 'node_modules/@dhv'), { recursive: true });
    await symlink('../../packages/harness', join(tree, 'node_modules/@dhv/harness'));
    // No dist/ exists: the import resolves through the '@dhv/source' condition, so the layering
    // rule fires rather than not-to-unresolvable.
    expect(await violations()).toEqual(['plugins-not-harness']);
  });

  it('fail a cycle between folders, though no module imports itself back', async () => {
    await writeFiles({ 'packages/harness/src/config/defaults.ts': "export { a } from '../agent/agent.js';\n" });
    expect(await violations()).toEqual(['no-folder-cycle']);
  });
});

describe("the runner's door in ESLint (npm run lint:eslint)", () => {
  const spawning = "import { execPlugin } from '@dhv/sdk/client';\nexport const run = execPlugin;\n";
  async function restricted(path: string, text: string): Promise<string[]> {
    const eslint = new ESLint({ cwd: tree, overrideConfigFile: join(repo, 'eslint.config.js') });
    const [result] = await eslint.lintText(text, { filePath: join(tree, path) });
    return result!.messages.map((m) => m.ruleId ?? m.message);
  }

  it('fails any harness module importing execPlugin from @dhv/sdk/client, and lets other names through', async () => {
    expect(await restricted('packages/harness/src/agent/orphans.ts', spawning)).toEqual(['no-restricted-imports']);
    expect(await restricted('packages/harness/src/runner/process-runner.ts', spawning)).toEqual([
      'no-restricted-imports',
    ]);
    expect(
      await restricted(
        'packages/harness/src/agent/orphans.ts',
        "import { PluginError } from '@dhv/sdk/client';\nexport const e = PluginError;\n",
      ),
    ).toEqual([]);
  });
  it('fails a source file past 400 lines and a function past 80, but not a test file', async () => {
    const longFunction = `export function f(): number {\n  let n = 0;\n${'  n += 1;\n'.repeat(85)}  return n;\n}\n`;
    const longFile = `${'export const c = 1;\n'.repeat(401)}`;
    expect(await restricted('packages/harness/src/agent/planted.ts', longFunction)).toEqual(['max-lines-per-function']);
    expect(await restricted('packages/sdk/src/go/planted.ts', longFile)).toContain('max-lines');
    expect(await restricted('packages/harness/src/agent/planted.test.ts', longFunction + longFile)).not.toContain(
      'max-lines',
    );
  });

  it("fails a command calling oclif's warn or error, which the lean start-up's Command has not", async () => {
    const command = (call: string) =>
      `export class C {\n  warnLine(_m: string): void {}\n  run(): void {\n    ${call};\n  }\n}\n`;
    const path = 'packages/harness/src/commands/volume/planted.ts';
    expect(await restricted(path, command("this.warn('x')"))).toEqual(['no-restricted-syntax']);
    expect(await restricted(path, command("this.error('x')"))).toEqual(['no-restricted-syntax']);
    expect(await restricted(path, command("this.warnLine('x')"))).toEqual([]);
    expect(await restricted('packages/harness/src/agent/planted.ts', command("this.warn('x')"))).toEqual([]);
  });

  it("lets only the harness's process runner make a ProcessRunner, so every plugin group reaches the cleanup journal", async () => {
    const making = "import { ProcessRunner } from '@dhv/sdk/client';\nexport const r = new ProcessRunner();\n";
    expect(await restricted('packages/harness/src/conformance/session.ts', making)).toEqual(['no-restricted-imports']);
    expect(await restricted('packages/harness/src/runner/process-runner.ts', making)).toEqual([]);
  });
});

describe("the @dhv/* packages' exports", () => {
  it("name the TypeScript sources first under '@dhv/source', the condition lint:deps resolves", async () => {
    const missing: string[] = [];
    for (const dir of await readdir(join(repo, 'packages'))) {
      const manifest = JSON.parse(await readFile(join(repo, 'packages', dir, 'package.json'), 'utf8')) as {
        exports: Record<string, string | Record<string, string>>;
      };
      for (const [entry, target] of Object.entries(manifest.exports)) {
        if (typeof target === 'string') continue;
        const [first, source] = Object.entries(target)[0] ?? [];
        const exists =
          source !== undefined &&
          (await readFile(join(repo, 'packages', dir, source)).then(
            () => true,
            () => false,
          ));
        if (first !== '@dhv/source' || !exists) missing.push(`packages/${dir} ${entry}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('the unused-dependency check (npm run lint:unused)', () => {
  it('fails on a declared dependency that nothing imports, and passes once it is imported', async () => {
    await writeFiles({
      'package.json': JSON.stringify({
        name: 'fixture',
        private: true,
        type: 'module',
        main: 'src/index.ts',
        dependencies: { zod: '*' },
      }),
      'src/index.ts': 'export const x = 1;\n',
    });
    const unused = await run(KNIP, ['--include', 'dependencies', '--no-progress'], tree);
    expect(unused.code).toBe(1);
    expect(unused.stdout).toMatch(/Unused dependencies \(1\)\s+zod/);

    await writeFiles({ 'src/index.ts': "import { z } from 'zod';\nexport const x = z;\n" });
    const used = await run(KNIP, ['--include', 'dependencies', '--no-progress'], tree);
    expect(used.stdout).toBe('');
    expect(used.code).toBe(0);
  });
});
