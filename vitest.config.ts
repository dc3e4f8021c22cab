import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The tests that run dhv's code in the test's own process (the plugins they call may be
 * small scripts): no `dhv` executable, no npm, no mounts. `npm run test:quick` runs these.
 */
const IN_PROCESS = [
  'packages/*/src/**/*.test.ts',
  'test/agent-scenarios.test.ts',
  'test/mkdir-concurrency.test.ts',
  'test/nomad-discovery.test.ts',
  'test/nomad-plugin-exec.test.ts',
  'test/sdk-bench-lib.test.ts',
  'test/go-homes.test.ts',
  'test/jobs-claims-in-process.test.ts',
  'test/jobs-lifecycle-in-process.test.ts',
];

/**
 * Test files at once. Most of a test's time is spent waiting for processes it started, so
 * twice the cores keeps them busy; vitest's default (cores - 1) ran the suite one file at a
 * time on 2 cores. DHV_TEST_FORKS overrides it.
 */
const forks = Number(process.env.DHV_TEST_FORKS ?? Math.max(2, availableParallelism() * 2));

export default defineConfig({
  test: {
    // Tests change umask, run as other users and mount filesystems: each file gets its own process.
    pool: 'forks',
    poolOptions: { forks: { maxForks: forks, minForks: 1 } },
    // Generous: a deadline here only says a test hung. Speed is measured in bench/, never here,
    // and the suite must pass on a machine loaded well past its core count: at load average
    // 30 on 2 cores one `dhv` process takes 15 s, and tests of ten of them missed 180 s.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    reporters: ['default'],
    // The reference plugins record their volumes dirs' disks outside them; tests' records go at the end.
    // By its absolute path: a project made inside the checkout (the docs' `dhv init my-plugin`) that
    // has no vitest config of its own is run with this one, from its own root.
    // Before the run, the cleanup journals killed test processes of an earlier run left; after
    // it, the CLI bundles its rebuilds replaced.
    globalSetup: [
      fileURLToPath(new URL('./test/support/global-disk-records.ts', import.meta.url)),
      fileURLToPath(new URL('./test/support/global-orphaned-journals.ts', import.meta.url)),
      fileURLToPath(new URL('./test/support/global-cli-bundles.ts', import.meta.url)),
    ],
    // DHV_TEST_CPU=<file> records each file's processor time there (bench/test-times.mjs reads it);
    // each file's end releases what its tests made through the cleanup journal and left.
    setupFiles: [
      fileURLToPath(new URL('./test/support/file-cpu.ts', import.meta.url)),
      fileURLToPath(new URL('./test/support/file-journal.ts', import.meta.url)),
    ],
    projects: [
      { extends: true, test: { name: 'in-process', include: IN_PROCESS } },
      {
        extends: true,
        test: {
          name: 'processes',
          include: ['packages/*/src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: [...IN_PROCESS, '**/node_modules/**'],
        },
      },
    ],
    // `--coverage` measures the code the test processes themselves run (compiled `dist/` is
    // mapped back to `src/` by its source maps); code run only inside a spawned `dhv` or plugin
    // process is not counted.
    coverage: {
      provider: 'v8',
      include: ['packages/*/src/**/*.ts'],
      exclude: ['**/*.test.ts', '**/__fixtures__/**', '**/testing/**', '**/test-seams/**'],
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: 'coverage',
      // A failed test still leaves the figures of what ran (vitest writes none by default).
      reportOnFailure: true,
    },
  },
});
