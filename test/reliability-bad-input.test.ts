import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV, NULL_PARAMETERS, type Operation } from '@dhv/sdk/plugin';
import { spawnPlugin } from '@dhv/sdk/client';
import { builtPlugin, type ReferencePlugin, tempDir, removeTempDir } from './support/kit.js';
import { mapLimit } from './support/map-limit.js';
import { pick, seededRandom } from './support/seeded-random.js';
import { snapshotTree } from './support/tree-snapshot.js';
import { testSeed } from './support/seed.js';

/**
 * Bad input to the plugins: a seeded corpus of malformed requests for each
 * reference plugin, run the way an agent runs a plugin but with hand-made environments.
 * Every case must exit non-zero with one `{"error": ...}` document on stdout that names
 * the problem, print no stack trace there, and leave the sandbox around the volumes dir
 * byte-for-byte as it was. Replay a failure with the line it prints (DHV_CORPUS_SEED=<seed>).
 */

const SEED = testSeed('DHV_CORPUS_SEED', 20261129, 'test/reliability-bad-input.test.ts');
/**
 * The corpus's size per plugin: one case of each kind of fault, then seeded random ones up to
 * this many (each case's variations around its fault are seeded, and CI's seed is fresh every
 * run). By default no more than one of each; the soak (test/soak/bad-input-soak.test.ts)
 * runs 200.
 */
const CASES_PER_PLUGIN = Number(process.env.DHV_CORPUS_CASES ?? 0);
const REPLAY = `DHV_CORPUS_SEED=${SEED}${CASES_PER_PLUGIN > 0 ? ` DHV_CORPUS_CASES=${CASES_PER_PLUGIN}` : ''}`;
const CONCURRENCY = 4;
const MiB = 1024 * 1024;

const EXISTING_ID = '11111111-2222-4333-8444-555555555555';
const NEW_IDS = [
  '0f8e7d6c-5b4a-4938-a271-605f4e3d2c1b',
  'ABCDEF01-2345-4678-9ABC-DEF012345678',
  'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d',
];

type Env = Record<string, string | undefined>;

interface Layout {
  sandbox: string;
  volumesDir: string;
  pluginDir: string;
  victim: string;
}

interface Mutation {
  name: string;
  ops: readonly Operation[];
  /** Only for the plugin whose own parameters these are. */
  plugin?: ReferencePlugin;
  apply: (env: Env, argv: string[], layout: Layout) => void;
  /** What the error must mention, so a person knows what to fix. */
  mentions: RegExp;
}

const CREATE_ONLY = ['create'] as const;
const DELETE_ONLY = ['delete'] as const;
const BOTH = ['create', 'delete'] as const;

const COMMON_VARS = [
  ENV.volumesDir,
  ENV.pluginDir,
  ENV.namespace,
  ENV.volumeName,
  ENV.volumeId,
  ENV.nodeId,
  ENV.nodePool,
  ENV.parameters,
] as const;
const CREATE_VARS = [...COMMON_VARS, ENV.capacityMinBytes, ENV.capacityMaxBytes] as const;
const DELETE_VARS = [...COMMON_VARS, ENV.createdPath] as const;

/** The catalogue: every kind of malformed request the issue names, each applied alone to a valid request. */
function mutations(): Mutation[] {
  const list: Mutation[] = [];
  const varsFor = (op: Operation) => (op === 'create' ? CREATE_VARS : DELETE_VARS);

  list.push({
    name: `missing ${ENV.operation}`,
    ops: BOTH,
    apply: (env) => delete env[ENV.operation],
    mentions: new RegExp(ENV.operation),
  });
  for (const op of BOTH) {
    for (const name of varsFor(op)) {
      list.push({
        name: `missing ${name} (${op})`,
        ops: [op],
        apply: (env) => delete env[name],
        mentions: new RegExp(`${name} is missing`),
      });
      // An empty DHV_CREATED_PATH is what the agent sends for a volume created without a path, so it is valid;
      // an empty name and namespace on delete are the agent's cleanup delete (test/check-cleanup-delete.test.ts).
      const validWhenEmpty =
        name === ENV.createdPath || (op === 'delete' && (name === ENV.volumeName || name === ENV.namespace));
      if (!validWhenEmpty) {
        list.push({
          name: `empty ${name} (${op})`,
          ops: [op],
          apply: (env) => (env[name] = ''),
          mentions: new RegExp(`${name}`),
        });
      }
    }
  }

  const badIds: Array<[string, string]> = [
    ['../..', '../..'],
    ['/', '/'],
    ['.', '.'],
    ['..', '..'],
    ['../victim', '../victim'],
    ['a path into the victim', '../victim/secret.txt'],
    ['a UUID followed by a newline', `${EXISTING_ID}\n`],
    ['a newline inside', '11111111-2222-4333-8444\n-555555555555'],
    ['a UUID with /.. after it', `${EXISTING_ID}/..`],
    ['a UUID with a trailing space', `${EXISTING_ID} `],
    ['what reaches a plugin of "../victim\\0<uuid>" (an environment ends a value at NUL)', '../victim'],
    ['what reaches a plugin of "..\\0/<uuid>"', '..'],
    ['36 characters that are not hex', 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz'],
    ['an absolute path', '/etc/passwd'],
  ];
  for (const [what, id] of badIds) {
    list.push({
      name: `volume ID ${what}`,
      ops: BOTH,
      apply: (env) => (env[ENV.volumeId] = id),
      mentions: new RegExp(ENV.volumeId),
    });
  }

  for (const dir of ['volumes', './volumes', '../volumes', '~/volumes', 'volumes/']) {
    list.push({
      name: `relative volumes dir ${JSON.stringify(dir)}`,
      ops: BOTH,
      apply: (env) => (env[ENV.volumesDir] = dir),
      mentions: new RegExp(`${ENV.volumesDir} must be an absolute path`),
    });
  }
  for (const dir of ['plugins', './plugins']) {
    list.push({
      name: `relative plugin dir ${JSON.stringify(dir)}`,
      ops: BOTH,
      apply: (env) => (env[ENV.pluginDir] = dir),
      mentions: new RegExp(`${ENV.pluginDir} must be an absolute path`),
    });
  }

  const badCapacities = [
    '-1',
    '-1048576',
    'abc',
    '1e9',
    '0x10',
    '10GB',
    '50MiB',
    ' 5',
    '5 ',
    '1.5',
    '+5',
    '9223372036854775808',
    '99999999999999999999999',
    '١٢٣',
  ];
  for (const name of [ENV.capacityMinBytes, ENV.capacityMaxBytes]) {
    for (const value of badCapacities) {
      list.push({
        name: `${name}=${JSON.stringify(value)}`,
        ops: CREATE_ONLY,
        apply: (env) => (env[name] = value),
        mentions: new RegExp(name),
      });
    }
  }
  for (const [min, max] of [
    [2 * MiB, MiB],
    [64 * MiB, 64 * MiB - 1],
  ] as const) {
    list.push({
      name: `capacity_max ${max} below capacity_min ${min}`,
      ops: CREATE_ONLY,
      apply: (env) => {
        env[ENV.capacityMinBytes] = String(min);
        env[ENV.capacityMaxBytes] = String(max);
      },
      mentions: new RegExp(`${ENV.capacityMaxBytes} \\(${max}\\) is smaller than ${ENV.capacityMinBytes}`),
    });
  }

  const badParameters = [
    '{',
    'not json',
    '[]',
    '["mode"]',
    '"mode"',
    '42',
    'true',
    'nul',
    '{"mode": 700}',
    '{"mode": null}',
    '{"uid": {"value": "0"}}',
    '{"gid": ["0"]}',
    '{"mode": true}',
    '{"mode":"0700"} {}',
  ];
  for (const value of badParameters) {
    list.push({
      name: `${ENV.parameters}=${value}`,
      ops: BOTH,
      apply: (env) => (env[ENV.parameters] = value),
      mentions: new RegExp(ENV.parameters),
    });
  }

  const pluginParameters: Array<[ReferencePlugin, string, RegExp]> = [
    ['dhv-mkdir', '{"evil":"x"}', /unknown parameter "evil"/],
    ['dhv-mkdir', '{"mode":"999"}', /"mode"/],
    ['dhv-mkdir', '{"mode":"rwxr-x---"}', /"mode"/],
    // Values Nomad's own mkdir refuses (17777, -5 and 4294967296 it accepts: the vectors' builtin-mkdir.json).
    ['dhv-mkdir', '{"mode":"0o755"}', /"mode"/],
    ['dhv-mkdir', '{"mode":"40000000000"}', /"mode"/],
    ['dhv-mkdir', '{"uid":"root"}', /"uid"/],
    ['dhv-mkdir', '{"gid":"99999999999999999999"}', /"gid"/],
    ['dhv-mkdir', '{"uid":"0x10"}', /"uid"/],
    ['dhv-loopback', '{"evil":"x"}', /unknown parameter "evil"/],
    ['dhv-loopback', '{"fs":"btrfs"}', /fs must be one of/],
    ['dhv-loopback', '{"fs":"../../bin/sh"}', /fs must be one of/],
    ['dhv-loopback', '{"mount_options":"exec"}', /"exec" is not allowed/],
    ['dhv-loopback', '{"mount_options":"nosuid,suid"}', /"suid" is not allowed/],
    ['dhv-loopback', '{"mount_options":"loop=/dev/loop0"}', /is not allowed/],
    ['dhv-loopback', '{"preallocate":"maybe"}', /preallocate/],
    ['dhv-loopback', '{"mode":"999"}', /mode/],
    ['dhv-loopback', '{"uid":"root"}', /uid/],
  ];
  for (const [plugin, value, mentions] of pluginParameters) {
    list.push({
      name: `${plugin} parameters ${value}`,
      ops: CREATE_ONLY,
      plugin,
      apply: (env) => (env[ENV.parameters] = value),
      mentions,
    });
  }

  const createdPaths: Array<[string, (l: Layout) => string]> = [
    // The volumes dir itself is the agent's cleanup delete, which must succeed for that one volume (test/check-cleanup-delete.test.ts).
    ['/', () => '/'],
    ['the parent of the volumes dir', (l) => `${l.volumesDir}/..`],
    ['the victim outside the volumes dir', (l) => l.victim],
    ['/etc', () => '/etc'],
    ['another volume', (l) => join(l.volumesDir, EXISTING_ID)],
    ['a relative path', () => `volumes/${EXISTING_ID}`],
  ];
  for (const [what, path] of createdPaths) {
    list.push({
      name: `${ENV.createdPath} is ${what}`,
      ops: DELETE_ONLY,
      apply: (env, _argv, layout) => {
        env[ENV.createdPath] = path(layout);
        // Aim at a volume that is not the one the path names, so a plugin that trusted the path would do damage.
        if (what === 'another volume') env[ENV.volumeId] = NEW_IDS[0];
      },
      mentions: new RegExp(ENV.createdPath),
    });
  }

  list.push({
    name: 'argv operation unknown',
    ops: BOTH,
    apply: (_env, argv) => argv.splice(0, argv.length, 'Create'),
    mentions: /unknown operation "Create"/,
  });
  list.push({
    name: 'argv operation empty',
    ops: BOTH,
    apply: (_env, argv) => argv.splice(0, argv.length, ''),
    mentions: /unknown operation ""/,
  });
  list.push({
    name: 'no argv operation',
    ops: BOTH,
    apply: (_env, argv) => argv.splice(0, argv.length),
    mentions: /no operation given/,
  });
  list.push({
    name: `${ENV.operation} disagrees with argv`,
    ops: BOTH,
    apply: (env) => (env[ENV.operation] = env[ENV.operation] === 'create' ? 'delete' : 'create'),
    mentions: /must agree/,
  });
  list.push({
    name: `${ENV.operation} in capitals`,
    ops: BOTH,
    apply: (env) => (env[ENV.operation] = env[ENV.operation]!.toUpperCase()),
    mentions: /must agree/,
  });
  return list;
}

interface Case {
  index: number;
  plugin: ReferencePlugin;
  operation: Operation;
  mutation: Mutation;
  /** Valid variations around the fault, so the corpus is not one request with one hole. */
  variation: {
    volumeId: string;
    volumeName: string;
    namespace: string;
    parameters: string;
    capacity: [number, number];
  };
}

/** At least one case for every mutation that applies to `plugin`, then seeded random ones up to `count`. */
function generateCorpus(plugin: ReferencePlugin, seed: number, count: number): Case[] {
  const random = seededRandom(seed);
  const applicable = mutations().filter((m) => m.plugin === undefined || m.plugin === plugin);
  const cases: Case[] = [];
  const add = (mutation: Mutation) => {
    const operation = pick(random, mutation.ops);
    cases.push({
      index: cases.length,
      plugin,
      operation,
      mutation,
      variation: {
        // Half the deletes aim at the volume that exists, so a plugin that ignored the fault would remove it.
        volumeId: operation === 'delete' && random() < 0.5 ? EXISTING_ID : pick(random, NEW_IDS),
        volumeName: pick(random, ['web', 'Ω data', 'name with spaces', 'x'.repeat(200)]),
        namespace: pick(random, ['default', 'prod']),
        parameters: pick(random, [NULL_PARAMETERS, '{}']),
        capacity: pick(random, [
          [10 * MiB, 0],
          [10 * MiB, 64 * MiB],
          [0, 32 * MiB],
        ] as const) as [number, number],
      },
    });
  };
  for (const mutation of applicable) add(mutation);
  while (cases.length < count) add(pick(random, applicable));
  return cases;
}

function requestFor(c: Case, layout: Layout): { argv: string[]; env: Env } {
  const v = c.variation;
  const env: Env = {
    [ENV.operation]: c.operation,
    [ENV.volumesDir]: layout.volumesDir,
    [ENV.pluginDir]: layout.pluginDir,
    [ENV.namespace]: v.namespace,
    [ENV.volumeName]: v.volumeName,
    [ENV.volumeId]: v.volumeId,
    [ENV.nodeId]: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
    [ENV.nodePool]: 'default',
    [ENV.parameters]: v.parameters,
  };
  if (c.operation === 'create') {
    env[ENV.capacityMinBytes] = String(v.capacity[0]);
    env[ENV.capacityMaxBytes] = String(v.capacity[1]);
  } else {
    env[ENV.createdPath] = join(layout.volumesDir, v.volumeId);
  }
  const argv = [c.operation];
  c.mutation.apply(env, argv, layout);
  return { argv, env };
}

/** A small world around the volumes dir: a volume that exists, a victim outside, links between them. */
async function buildSandbox(): Promise<Layout> {
  const sandbox = await tempDir('corpus');
  const layout: Layout = {
    sandbox,
    volumesDir: join(sandbox, 'volumes'),
    pluginDir: join(sandbox, 'plugins'),
    victim: join(sandbox, 'victim'),
  };
  await mkdir(join(layout.volumesDir, EXISTING_ID, 'sub'), { recursive: true });
  await writeFile(join(layout.volumesDir, EXISTING_ID, 'data.txt'), 'volume data\n');
  await symlink('../../../victim', join(layout.volumesDir, EXISTING_ID, 'sub', 'to-victim'));
  await chmod(join(layout.volumesDir, EXISTING_ID), 0o750);
  await mkdir(layout.victim, { mode: 0o700 });
  await writeFile(join(layout.victim, 'secret.txt'), 'do not touch\n', { mode: 0o600 });
  await mkdir(layout.pluginDir);
  await mkdir(join(sandbox, 'cwd'));
  return layout;
}

const STACK_FRAME = /^\s+at .+(:\d+:\d+\)?|\(native\))$/m;

interface Verdict {
  name: string;
  problems: string[];
}

async function runCase(executable: string, c: Case): Promise<Verdict> {
  const layout = await buildSandbox();
  const name = `#${c.index} ${c.plugin} ${c.operation}: ${c.mutation.name}`;
  try {
    const { argv, env } = requestFor(c, layout);
    const before = await snapshotTree(layout.sandbox);
    const clean = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
    // A relative path, if any plugin honoured one, lands inside the sandbox.
    const run = await spawnPlugin(executable, argv, clean, {
      timeoutMs: 30_000,
      maxOutputBytes: MiB,
      cwd: join(layout.sandbox, 'cwd'),
    });
    const after = await snapshotTree(layout.sandbox);
    const stdout = run.stdout.toString('utf8');
    const problems: string[] = [];
    if (run.exitCode === 0 || run.exitCode === null)
      problems.push(`exit ${run.exitCode ?? run.signal}, expected a non-zero exit code`);
    let message: unknown;
    try {
      message = (JSON.parse(stdout) as { error?: unknown }).error;
    } catch {
      problems.push(`stdout is not one JSON document: ${JSON.stringify(stdout.slice(0, 200))}`);
    }
    if (typeof message !== 'string' || message === '')
      problems.push(`stdout has no "error" string: ${JSON.stringify(stdout.slice(0, 200))}`);
    else if (!c.mutation.mentions.test(message))
      problems.push(`the error does not mention ${c.mutation.mentions}: ${JSON.stringify(message)}`);
    if (STACK_FRAME.test(stdout)) problems.push('stdout holds a stack trace');
    if (JSON.stringify(after) !== JSON.stringify(before)) {
      const changed = [...after, ...before].filter(
        (e) =>
          JSON.stringify(before.find((b) => b.path === e.path)) !==
          JSON.stringify(after.find((a) => a.path === e.path)),
      );
      problems.push(`the sandbox changed: ${[...new Set(changed.map((e) => e.path))].join(', ')}`);
    }
    return { name, problems };
  } finally {
    // Only a plugin that wrongly accepted a case mounts anything; undo that before removing the files.
    await removeTempDir(layout.sandbox);
  }
}

for (const plugin of ['dhv-mkdir', 'dhv-loopback'] as const) {
  describe(`${plugin} given a corpus of malformed requests (seed ${SEED})`, () => {
    let executable: string;
    const corpus = generateCorpus(plugin, SEED + (plugin === 'dhv-mkdir' ? 0 : 1), CASES_PER_PLUGIN);

    beforeAll(() => {
      executable = builtPlugin(plugin);
    }, 120_000);

    it(`covers every kind of fault at least once, ${corpus.length} cases in all`, () => {
      expect(corpus.length).toBeGreaterThanOrEqual(100);
      const kinds = new Set(corpus.map((c) => c.mutation.name));
      const applicable = mutations().filter((m) => m.plugin === undefined || m.plugin === plugin);
      expect(kinds.size).toBe(applicable.length);
    });

    it('refuses every case: non-zero exit, one {"error"} naming the problem, no stack trace, nothing on disk changed', async () => {
      const verdicts = await mapLimit(corpus, CONCURRENCY, (c) => runCase(executable, c));
      const failed = verdicts.filter((v) => v.problems.length > 0);
      const report = failed.map((v) => `${v.name}\n    ${v.problems.join('\n    ')}`).join('\n');
      if (failed.length > 0) console.error(`replay with ${REPLAY}\n${report}`);
      expect(failed.length, `${failed.length} of ${verdicts.length} cases failed (${REPLAY}):\n${report}`).toBe(0);
    }, 300_000);
  });
}

describe('a request holding a NUL byte', () => {
  let layout: Layout;
  beforeAll(async () => {
    layout = await buildSandbox();
  });
  afterAll(async () => {
    await removeTempDir(layout?.sandbox);
  });

  it('never reaches a plugin: the environment cannot carry it, and spawning is refused before anything runs', async () => {
    const marker = join(layout.sandbox, 'ran');
    const script = join(layout.pluginDir, 'marker');
    await writeFile(script, `#!/bin/bash\n/usr/bin/touch ${marker}\n`, { mode: 0o755 });
    const env = { [ENV.operation]: 'create', [ENV.volumeId]: `../victim\0${EXISTING_ID}` };

    // Refused as Go's os/exec refuses it: EINVAL ("fork/exec ...: invalid argument"), nothing started.
    const run = await spawnPlugin(script, ['create'], env, { timeoutMs: 5_000, maxOutputBytes: MiB });
    expect(run.spawnError?.code).toBe('EINVAL');
    expect(await snapshotTree(layout.sandbox)).not.toContainEqual(expect.objectContaining({ path: 'ran' }));
  });
});
