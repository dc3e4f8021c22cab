// The allowed arrows between the parts of dhv (docs/architecture.md), checked by
// `npm run lint`. A forbidden import fails the build with the rule's name and comment.
const SDK = '^packages/sdk/';
const HARNESS = '^packages/harness/';
const PLUGINS = '^packages/plugin-[^/]+/';
const H = '^packages/harness/src/';
/**
 * What only tests use, in a package: its src/testing/ and src/__fixtures__/, the harness's
 * testing entry (src/testing.ts, @dhv/harness/testing) and what that entry ships beside it
 * (src/test-seams/: the package's testing/ folders are never packed), and the fake runner,
 * which runner/ keeps beside the real ones. The test kit (test/support/) has a rule of its own.
 */
const TEST_SEAM = [
  '/__fixtures__/',
  '^packages/[^/]+/src/testing(/|\\.ts$)',
  `${H}test-seams/`,
  `${H}runner/fake-runner\\.ts$`,
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'plugins-not-harness',
      comment: 'A plugin depends on @dhv/sdk only; the harness is a test tool, not a runtime dependency.',
      severity: 'error',
      from: { path: PLUGINS },
      to: { path: HARNESS },
    },
    {
      name: 'plugins-not-each-other',
      comment: 'Each reference plugin stands alone: what two plugins share belongs in @dhv/sdk.',
      severity: 'error',
      from: { path: '^packages/(plugin-[^/]+)/' },
      to: { path: PLUGINS, pathNot: '^packages/$1/' },
    },
    {
      name: 'sdk-knows-no-user',
      comment: 'The SDK is imported by the plugins and the harness, never the other way round.',
      severity: 'error',
      from: { path: SDK },
      to: { path: [HARNESS, PLUGINS] },
    },
    {
      name: 'harness-not-plugins',
      comment: 'The harness runs plugins as programs, as Nomad does; it never imports their code.',
      severity: 'error',
      from: { path: HARNESS },
      to: { path: PLUGINS },
    },
    {
      name: 'protocol-knows-neither-side',
      comment: 'protocol/ is shared by the plugin side (runtime/) and the agent side (client/) and imports neither.',
      severity: 'error',
      from: { path: `${SDK}src/protocol/` },
      to: { path: `${SDK}src/(runtime|client)/` },
    },
    {
      name: 'runtime-not-client',
      comment: 'A plugin never loads the agent-side client.',
      severity: 'error',
      from: { path: `${SDK}src/runtime/` },
      to: { path: `${SDK}src/client/` },
    },
    {
      name: 'model-knows-no-cli',
      comment:
        'The agent model, the conformance catalogue, config and volume specs are libraries: ' +
        'they import no CLI command and no presenter.',
      severity: 'error',
      from: { path: `${H}(agent|runner|conformance|config|volume-specs|authoring|errors|record|jobs)/` },
      to: { path: `${H}(commands|presenters)/` },
    },
    {
      name: 'state-layout-only-in-store',
      comment:
        "The data dir's layout and the durable file calls belong to the agent's state store (agent/state/): " +
        'everything else asks the store in intent-level calls and opens no file under the data dir.',
      severity: 'error',
      from: { pathNot: `${H}agent/state/` },
      to: { path: `${H}agent/state/(layout|durable-file)\\.ts$` },
    },
    {
      name: 'sdk-client-only-spawns',
      comment:
        "Every plugin call goes through the one door, @dhv/sdk/client's PluginRunner (docs/architecture.md): " +
        "only the SDK's client/ imports its spawning code; the harness runs plugins through its processRunner. " +
        'eslint.config.js refuses the same names imported from @dhv/sdk/client.',
      severity: 'error',
      from: { path: '^packages/', pathNot: [`${SDK}src/client/`, `${SDK}src/client\\.ts$`, '\\.test\\.ts$'] },
      to: {
        path: `${SDK}(src|dist)/client/(exec-plugin|spawn-plugin|plugin-run-watch|plugin-output|discover-plugins|plugin-call|process-runner)\\.`,
      },
    },
    {
      name: 'agent-knows-no-cli-framework',
      comment:
        "The agent is a library: only commands/ know oclif. A planted import of @oclif/core into the agent's code fails here.",
      severity: 'error',
      from: { path: `${H}agent/` },
      to: { path: '(^|/)@oclif/core' },
    },
    {
      name: 'commands-through-the-agent',
      comment:
        'A command asks the agent (the Agent facade, agent/*.ts), never its state store: what the data dir holds ' +
        '(the node ID included) is read through the agent, so the store can change without a command noticing.',
      severity: 'error',
      from: { path: `${H}commands/` },
      to: { path: `${H}agent/state/` },
    },
    {
      name: 'conformance-not-agent',
      comment:
        'The conformance catalogue judges plugins without the simulated agent, except the tasks checks, ' +
        'which run jobs on a client of their own through task-client.ts.',
      severity: 'error',
      from: {
        path: `${H}conformance/`,
        pathNot: [`${H}conformance/task-client\\.ts$`, `${H}conformance/catalogue/tasks\\.ts$`],
      },
      to: { path: `${H}agent/` },
    },
    {
      name: 'tasks-checks-through-the-agent',
      comment:
        'The tasks checks run jobs as `dhv job run` does: through the Agent facade (agent/agent.ts), never its ' +
        'allocations, task runner or store, so there is one task runner.',
      severity: 'error',
      from: { path: [`${H}conformance/task-client\\.ts$`, `${H}conformance/catalogue/tasks\\.ts$`] },
      to: { path: `${H}agent/`, pathNot: `${H}agent/agent\\.ts$` },
    },
    {
      name: 'go-is-a-leaf',
      comment:
        "The harness's go/ holds Go's rules as Go's libraries have them (docs/architecture.md): every folder " +
        'may import it, and it imports no other folder of the harness.',
      severity: 'error',
      from: { path: `${H}go/` },
      to: { path: H, pathNot: `${H}go/` },
    },
    {
      name: 'presenters-not-commands',
      comment: 'Commands hand results to presenters; presenters never reach back into a command.',
      severity: 'error',
      from: { path: `${H}presenters/` },
      to: { path: `${H}commands/` },
    },
    {
      name: 'no-folder-cycle',
      comment: 'Folders depend on each other one way: a cycle between folders means a concept has two homes.',
      severity: 'error',
      scope: 'folder',
      // Test fixtures import the code they feed, and the tests next to that code import them.
      // (The test kit's own imports are not followed: see doNotFollow below.)
      from: { path: '^packages/', pathNot: '__fixtures__' },
      to: { circular: true, pathNot: '__fixtures__' },
    },
    {
      name: 'tests-only-import-the-kit',
      comment: "The test kit (test/) is for tests: a package's own code never imports it.",
      severity: 'error',
      from: { path: '^packages/', pathNot: ['\\.test\\.ts$', '__fixtures__'] },
      to: { path: '^test/' },
    },
    {
      name: 'production-imports-no-test-seam',
      comment:
        'Code that ships imports no test seam (TEST_SEAM above): only tests and the seams themselves do, ' +
        'so a helper written for tests never becomes part of dhv by accident.',
      severity: 'error',
      from: { path: '^packages/', pathNot: ['\\.test\\.ts$', ...TEST_SEAM] },
      to: { path: TEST_SEAM },
    },
    {
      name: 'no-module-cycle',
      comment: 'Modules import each other one way.',
      severity: 'error',
      from: { path: '^packages/' },
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment:
        'An import that does not resolve: a typo, or a package that is not declared. A compiled file (dist/) resolves only once built: a test that mocks one (vi.mock of the module the packages load) is checked by tsc instead.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true, pathNot: '^\\.\\./packages/[^/]+/dist/' },
    },
  ],
  options: {
    // The test kit (test/support/) imports every package and a package's tests import the kit, which
    // would close folder cycles that say nothing about the packages' design (a test is a leaf that
    // nothing imports; tests-only-import-the-kit keeps it so). Folder rules cannot ignore a cycle
    // through a path, so the kit's own imports are not followed; tsc and knip still resolve them.
    doNotFollow: { path: ['node_modules', '/dist/', '^packages/plugin-[^/]+/lib/', '^test/support/'] },
    exclude: { path: ['^packages/plugin-[^/]+/lib/', '^packages/harness/templates/', '/fixtures/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    // '@dhv/source' (the first condition of every @dhv/* package's exports) points at the
    // package's TypeScript sources, so the rules follow @dhv/* imports into the code they judge
    // before anything is built; node, tsc and bundlers know no such condition and take dist/.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['@dhv/source', 'types', 'import', 'default'],
      extensions: ['.ts', '.js', '.d.ts', '.mjs'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
