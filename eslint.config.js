// ESLint for the whole repository: typescript-eslint's recommended rules, without
// type-aware rules so that a run stays fast. Layering is checked by dependency-cruiser
// (.dependency-cruiser.cjs), unused dependencies by knip, formatting by Prettier.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

/** The SDK's names that start plugin processes, which the harness imports only through its processRunner. */
function restrictedSpawners(more) {
  return {
    name: '@dhv/sdk/client',
    importNames: ['execPlugin', 'spawnPlugin', 'discoverPlugins', 'interpretRun', ...more],
    message:
      "plugins are run through a PluginRunner: the harness's processRunner (packages/harness/src/runner/process-runner.ts) runs them as programs",
  };
}

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'packages/plugin-*/lib/**',
      'packages/harness/templates/**',
      'coverage/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false },
      ],
      '@typescript-eslint/no-this-alias': ['error', { allowedNames: ['session'] }],
      'no-empty': ['error', { allowEmptyCatch: true }],
      // Escaping XML and stripping terminal colours match control characters on purpose.
      'no-control-regex': 'off',
    },
  },
  {
    // Every plugin call goes through the one door, a PluginRunner (docs/architecture.md): the
    // harness runs plugins as programs only through its processRunner, the SDK's ProcessRunner
    // with the cleanup journal. dependency-cruiser's sdk-client-only-spawns sees a deep import,
    // this sees the names in @dhv/sdk/client.
    files: ['packages/harness/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [restrictedSpawners([])] }],
    },
  },
  {
    files: ['packages/harness/src/**/*.ts'],
    ignores: ['packages/harness/src/runner/process-runner.ts', '**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [restrictedSpawners(['ProcessRunner'])] }],
    },
  },
  {
    // kill(2) reads a PID of 0 as the caller's own process group and -1 as every process: a
    // PID read as 0 from a half-written file once SIGKILLed a whole CI run. Signals go through
    // @dhv/sdk/host's signalProcess and signalProcessGroup, which refuse both.
    ignores: ['packages/sdk/src/helpers/signals.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'kill',
          message:
            "use signalProcess / signalProcessGroup / processExists from @dhv/sdk/host: process.kill(0) signals the caller's own process group, process.kill(-1) every process",
        },
      ],
    },
  },
  {
    // Every command also runs from its lean bundle, where bin/lite-oclif.mjs stands in for
    // oclif's Command: it has log, logToStderr, exit and parse, not oclif's warn and error,
    // which would throw there "is not a function" at the moment they are needed. A command
    // warns with warnLine and fails by throwing (DhvCommand).
    files: ['packages/harness/src/commands/**/*.ts'],
    ignores: ['**/*.test.ts', 'packages/harness/src/commands/help.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.type='ThisExpression'][property.name=/^(warn|error|debug|toErrorJson)$/]",
          message:
            "oclif's Command members are not in the lean start-up's (bin/lite-oclif.mjs): warn with this.warnLine, fail by throwing",
        },
      ],
    },
  },
  {
    // Files with one job each (issue 33): a file past 400 lines, or a function past 80, mixes
    // jobs or steps. Every line counts for a file (what wc -l says); a function's blank and
    // comment lines do not, so a comment saying why is never the reason to split one.
    files: ['packages/*/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    // CommonJS on purpose: dhv's start requires Node's modules without an ES module's
    // facades (packages/harness/bin/cli-files.cjs; bin/package.json makes bin/*.js CommonJS).
    files: ['**/*.cjs', 'packages/harness/bin/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Tests read the CLI's parsed JSON output, whose shape they assert rather than declare.
    files: ['test/**', '**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
