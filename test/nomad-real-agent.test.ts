import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  jobReason,
  loadScenarios,
  loadSpecsThroughAgent,
  NOMAD_SPECS_DIR,
  orderedCalls,
  Placeholders,
  Sandbox,
  stderrAgrees,
  type PluginCall,
  type SpecThroughAgent,
} from './support/real-agent.js';
import { loopDevices, skipUnless, tool } from './support/requirements.js';

/**
 * What a real Nomad 2.0.5 agent did (test/vectors/real-agent/, copied unedited from the
 * shared vectors), replayed against dhv: every spec sent through `nomad volume create -detach`,
 * and every volume step of every scenario (a step that needs a job is skipped by the rule in
 * `jobReason`, and counted). Each case is judged aspect by aspect (exit, stdout, stderr, the
 * plugin calls, the volume's API document); the aspects that still differ are exactly the ones
 * in KNOWN_DIFFERENCES, each with its reason (docs/nomad-differences.md, "Against a real agent"),
 * so the list cannot go stale. A vector added to the folder is replayed as it is.
 */

/** Case (`<file>` or `<file>#<step>`) → aspect → why dhv differs there. */
const KNOWN_DIFFERENCES: Record<string, Record<string, string>> = {
  'heredoc-name.hcl': { stdout: 'a control character in a name is escaped in text output (docs/nomad-differences.md)' },
  'json-basic.spec.json': {
    stderr: 'Go iterates a map in random order: which unknown mkdir parameter Nomad names varies from run to run',
  },
  'params-octal-hex.hcl': {
    stdout: "dhv's Volume Warnings block says how Nomad reads an unquoted 0755 (docs/nomad-differences.md)",
  },
  'unknown-top-keys.hcl': {
    stdout: "dhv's Volume Warnings block names the keys Nomad ignores (docs/nomad-differences.md)",
  },
  'type-csi.hcl': { stderr: 'dhv has only host volumes: it refuses type = "csi" before the CSI validation Nomad runs' },
};

type Aspect = 'exit' | 'stdout' | 'stderr' | 'calls' | 'volume';

function known(id: string): string[] {
  return Object.keys(KNOWN_DIFFERENCES[id] ?? {}).sort();
}

const PLAIN_PLUGINS = ['default', 'p-one', 'p-two', 'lvm-thin', 'zfs-dataset', 'aws-ebs0'];

/** Sandboxes shared by the spec cases, one case at a time in each. */
class SandboxPool {
  private free: Sandbox[] = [];
  private waiting: Array<(s: Sandbox) => void> = [];
  readonly all: Sandbox[] = [];

  async fill(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const s = await Sandbox.make({ recorded: false, plainPlugins: PLAIN_PLUGINS });
      this.all.push(s);
      this.free.push(s);
    }
  }

  async use<T>(fn: (s: Sandbox) => Promise<T>): Promise<T> {
    const s = this.free.pop() ?? (await new Promise<Sandbox>((resolve) => this.waiting.push(resolve)));
    try {
      return await fn(s);
    } finally {
      const next = this.waiting.shift();
      if (next) next(s);
      else this.free.push(s);
    }
  }
}

/** The volume's API document as `apivol` prints it: no raft indexes, no times. */
function apiDocument(doc: Record<string, unknown>): Record<string, unknown> {
  const out = { ...doc };
  for (const k of ['CreateIndex', 'ModifyIndex', 'CreateTime', 'ModifyTime']) delete out[k];
  return sortedKeys(out) as Record<string, unknown>;
}

function sortedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortedKeys((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

async function replaySpec(pool: SandboxPool, vector: SpecThroughAgent): Promise<{ differs: Aspect[]; dhv: string }> {
  return pool.use(async (sandbox) => {
    copyFileSync(join(NOMAD_SPECS_DIR, vector.file), join(sandbox.work, vector.file));
    const run = await sandbox.sh(`$NOMAD volume create -detach ${vector.file}`);
    const differs: Aspect[] = [];
    const nomad = new Placeholders('nomad');
    const dhv = sandbox.placeholders();
    if (run.exit !== vector.exit) differs.push('exit');
    if (dhv.output(run.stdout) !== nomad.output(vector.stdout)) differs.push('stdout');
    if (!stderrAgrees(nomad.output(vector.stderr), dhv.output(run.stderr))) differs.push('stderr');
    const id = /with ID ([0-9a-f-]{36})/.exec(run.stdout)?.[1];
    if (id !== undefined) {
      // What `volume delete -json` gives (the volume as it was, and the sandbox free for the next
      // spec), by the library call the command makes, in this process: the create is what is compared.
      const doc = apiDocument(await sandbox.inProcess().delete<Record<string, unknown>>(id));
      // Read right after -detach, Nomad's servers still say pending until the node's next heartbeat; dhv's create is finished when it returns.
      const expected = { ...vector.volume, State: vector.volume?.State === 'pending' ? 'ready' : vector.volume?.State };
      if (
        JSON.stringify(sandbox.placeholders().json(doc)) !==
        JSON.stringify(new Placeholders('nomad').json(sortedKeys(expected)))
      )
        differs.push('volume');
    } else if (vector.volume) differs.push('volume');
    return { differs, dhv: JSON.stringify({ exit: run.exit, stdout: run.stdout, stderr: run.stderr }) };
  });
}

/** A plugin call as compared: its env's paths and IDs already put through placeholders. */
function callText(calls: readonly PluginCall[], ph: Placeholders): string {
  return JSON.stringify(
    orderedCalls(calls).map((c) =>
      ph.json({
        plugin: c.plugin,
        argv: c.argv,
        env: sortedKeys(c.env),
        exit: c.exit,
        stdout: c.stdout,
        stderr: c.stderr,
      }),
    ),
    null,
    1,
  );
}

const specs = loadSpecsThroughAgent();
const scenarios = loadScenarios();
/** Specs that agree on every aspect, printed at the end (issue 41 measures this number). */
const agreeing: string[] = [];

describe('the specs sent through a real agent (nomad-specs-through-agent.jsonl)', () => {
  const pool = new SandboxPool();
  beforeAll(() => pool.fill(2));
  afterAll(async () => {
    console.log(`specs through the agent: ${agreeing.length} of ${specs.length} agree on every aspect`);
    for (const s of pool.all) await s.cleanup();
  });

  it('has every spec of the corpus', () => {
    expect(specs.length).toBe(96);
    for (const v of specs) expect(existsSync(join(NOMAD_SPECS_DIR, v.file)), v.file).toBe(true);
  });

  describe.concurrent('each spec', () => {
    for (const vector of specs) {
      it(`${vector.file}: ${vector.exit === 0 ? 'created' : vector.stderr.split('\n')[0]!.slice(0, 80)}`, async () => {
        const { differs, dhv } = await replaySpec(pool, vector);
        if (differs.length === 0) agreeing.push(vector.file);
        expect(differs.sort(), dhv).toEqual(known(vector.file));
      });
    }
  });
});

const loopback = skipUnless(
  'the real-agent scenarios with dhv-loopback',
  loopDevices(),
  tool('mkfs.ext4', 'e2fsprogs'),
);

/**
 * Not yet run by default: each plugin sits behind a recorder that is a node process, and on a
 * loaded machine the recorder and the plugin together miss the fingerprint's 1 s deadline, so
 * the node reports fewer plugins than the real agent did (measured at load 38 on 2 CPUs).
 * DHV_REAL_AGENT_SCENARIOS=1 runs them. What is left to do: a recorder that starts faster.
 */
const scenariosOff = process.env.DHV_REAL_AGENT_SCENARIOS !== '1';

describe.skipIf(scenariosOff)('the scenarios recorded on a real agent, their volume steps', () => {
  for (const { file, scenario } of scenarios) {
    const needsLoop = Object.values(scenario.files).some((t) => t.includes('dhv-loopback'));
    describe.skipIf(needsLoop && loopback)(file, () => {
      let sandbox: Sandbox;
      const nomad = new Placeholders('nomad');
      let dhv: Placeholders;
      const made = ['/srv/registered', '/srv/registered-p'].filter((p) => !existsSync(p));
      beforeAll(async () => {
        sandbox = await Sandbox.make({ recorded: true });
        sandbox.writeFiles(scenario.files);
        dhv = sandbox.placeholders();
      });
      afterAll(async () => {
        await sandbox?.cleanup();
        for (const p of made) await import('node:fs/promises').then((fs) => fs.rm(p, { recursive: true, force: true }));
      });

      scenario.steps.forEach((step, i) => {
        const id = `${file}#${i}`;
        const skip = jobReason(step);
        it(`step ${i}: ${skip ? `skipped for jobs (${skip})` : (step.note ?? step.run)}`, async () => {
          if (skip) {
            // Its files and the agent's restarts still happen; what it did with a job is not judged.
            await sandbox.sh(step.run, skip === 'runs a job' ? { jobsAsNoOps: true } : { nomadAsNoOp: true });
            expect(known(id)).toEqual([]);
            return;
          }
          const run = await sandbox.sh(step.run);
          const differs: Aspect[] = [];
          if (run.exit !== step.exit) differs.push('exit');
          if (dhv.output(run.stdout) !== nomad.output(step.stdout)) differs.push('stdout');
          if (!stderrAgrees(nomad.output(step.stderr), dhv.output(run.stderr))) differs.push('stderr');
          if (callText(run.calls, dhv) !== callText(step.plugin_calls ?? [], nomad)) differs.push('calls');
          expect(differs.sort(), JSON.stringify({ dhv: { ...run, calls: undefined } }, null, 1)).toEqual(known(id));
        });
      });
    });
  }
});

describe('skipped for jobs', () => {
  it('is decided by a rule, and counted', () => {
    const skipped = scenarios.flatMap(({ file, scenario }) =>
      scenario.steps.flatMap((s, i) => (jobReason(s) ? [`${file}#${i}`] : [])),
    );
    const total = scenarios.reduce((n, { scenario }) => n + scenario.steps.length, 0);
    console.log(`scenario steps: ${total - skipped.length} of ${total} replayed, ${skipped.length} skipped for jobs`);
    expect(skipped.length).toBeGreaterThan(0);
  });

  it('lists only cases that exist', () => {
    const ids = new Set([
      ...specs.map((s) => s.file),
      ...scenarios.flatMap(({ file, scenario }) => scenario.steps.map((_s, i) => `${file}#${i}`)),
    ]);
    for (const id of Object.keys(KNOWN_DIFFERENCES)) expect(ids.has(id), id).toBe(true);
  });
});
