import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'test/**/*.test.ts'],
    // Tests change umask, run as other users and mount filesystems: each file gets its own process.
    pool: 'forks',
    // Generous: a deadline here only says a test hung. Speed is measured in bench/, never here,
    // and the suite must pass on a machine loaded well past its core count.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});
