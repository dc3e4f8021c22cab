import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { bundlePlugin } from '@dhv/sdk/build';
import { SUITE_TIMEOUT_MS, dhvCheck, failedRequired } from './support/check-cli.js';
import { REPO_ROOT as ROOT } from './support/kit.js';

/**
 * The SDK README's first example, exactly as printed, built as its readers build it and
 * judged by `dhv check`: the project's own first example must pass every required check.
 * (Every `dhv init` template is built and checked the same way in authoring-init.test.ts.)
 * Two explorer sequences, as for the reference plugins (check-reference-plugins.test.ts
 * says why): a correct plugin never ends the default 30 s budget early.
 */
let work: string;
beforeAll(async () => {
  // Inside the repository, so `@dhv/sdk/plugin` resolves as it does in a project that depends on it.
  work = await mkdtemp(join(ROOT, 'test', '.readme-example-'));
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

test(
  "the SDK README's first example passes every required check, the cleanup delete included",
  async () => {
    const readme = await readFile(join(ROOT, 'packages/sdk/README.md'), 'utf8');
    const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example, 'a ```ts block in packages/sdk/README.md').toBeDefined();
    const entry = join(work, 'scratch.ts');
    await writeFile(entry, example!);
    const { outfile } = await bundlePlugin({ entry, outfile: join(work, 'dist/scratch') });
    const { exitCode, report, leftovers } = await dhvCheck(outfile, ['--runs', '2']);
    expect(failedRequired(report)).toEqual([]);
    expect(report.results.find((r) => r.id === 'delete.cleanup-call')?.status).toBe('pass');
    expect(exitCode).toBe(0);
    expect(leftovers).toEqual([]);
  },
  SUITE_TIMEOUT_MS,
);
