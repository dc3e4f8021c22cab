import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readJobText } from './read-job-file.js';
import { registerableJob } from './validate-job.js';
import {
  MISSING_DRIVERS,
  MISSING_HOST_VOLUMES,
  infeasibility,
  type NodeView,
  type ServerHostVolume,
} from './host-volume-checker.js';
import { allocName } from './job-spec.js';

interface Scenario {
  files: Record<string, string>;
  steps: Array<{ run: string; exit: number; stderr: string }>;
}
const scenario = (name: string) =>
  JSON.parse(
    readFileSync(fileURLToPath(new URL(`../../../../test/vectors/real-agent/${name}`, import.meta.url)), 'utf8'),
  ) as Scenario;
const claims = scenario('03-claims.json');
const seedFlow = scenario('01-seed-flow-mkdir.json');

const read = async (file: string, from = claims) => (await readJobText(from.files[file]!, file)).job;

/** What a simulator without an HTTP API prints: the cause inside `Unexpected response code: 500 (...)`. */
function causeOf(stderr: string): string {
  const m = /Unexpected response code: 500 \(([\s\S]*)\)\n*$/.exec(stderr);
  return m![1]!;
}

describe('job specs as nomad job run reads them', () => {
  it('reads the seed flow job from HCL2: group, host volume request, exec task, mount, resources', async () => {
    const job = await read('job.nomad.hcl', seedFlow);
    expect(job).toMatchObject({ ID: 'writer', Namespace: 'default', Type: 'service' });
    const tg = job.TaskGroups[0]!;
    expect(tg).toMatchObject({ Name: 'g', Count: 1 });
    expect(tg.Volumes.data).toMatchObject({
      Type: 'host',
      Source: 'data1',
      AccessMode: 'single-node-writer',
      AttachmentMode: 'file-system',
      ReadOnly: false,
    });
    expect(tg.Tasks[0]).toMatchObject({
      Name: 't',
      Driver: 'exec',
      Resources: { CPU: 50, MemoryMB: 32 },
      VolumeMounts: [{ Volume: 'data', Destination: '/srv/data', ReadOnly: false }],
    });
    expect(tg.Tasks[0]!.Config.args![1]).toContain('written-by-a-task');
  });

  it('reads per_alloc, sticky, read_only and count from every job of the claims scenario', async () => {
    expect((await read('per-alloc.nomad.hcl')).TaskGroups[0]).toMatchObject({
      Count: 2,
      Volumes: { data: { PerAlloc: true } },
    });
    expect((await read('sticky.nomad.hcl')).TaskGroups[0]!.Volumes.data!.Sticky).toBe(true);
    expect((await read('reader-ok.nomad.hcl')).TaskGroups[0]!.Tasks[0]!.VolumeMounts[0]!.ReadOnly).toBe(true);
    expect((await read('bad-pa-system.nomad.hcl')).Type).toBe('system');
  });

  it('accepts what it does not model with one list of names, and reads the API JSON the same way', async () => {
    const spec = claims.files['raw.nomad.hcl']!.replace(
      'group "g" {',
      'group "g" {\n    network {\n      port "http" {}\n    }\n    service {\n      name = "x"\n    }',
    );
    const { job, unmodelled } = await readJobText(spec, 'raw.nomad.hcl');
    expect(unmodelled).toEqual(['group "g": network', 'group "g": service']);
    const again = await readJobText(JSON.stringify({ Job: job }), 'raw.json', { json: true });
    expect(again.job).toEqual(job);
  });

  it('says where an HCL2 spec does not parse, as hcl does', async () => {
    await expect(readJobText('job "a" {\n  group "g" {\n count = 1 +\n }\n}', 'bad.hcl')).rejects.toThrow(
      /bad\.hcl:3,\d+-\d+,\d+: Invalid expression/,
    );
  });
});

describe("register-time validation in Nomad's words", () => {
  const refused = claims.steps.filter((s) => s.run.includes('job run') && s.exit === 1);

  it('has the four refusals the real agent printed', () => expect(refused).toHaveLength(4));

  for (const step of refused) {
    const file = / ([\w-]+\.nomad\.hcl)/.exec(step.run)![1]!;
    it(`refuses ${file} word for word`, async () => {
      const job = await read(file);
      expect(() => registerableJob(job)).toThrow(expect.objectContaining({ message: causeOf(step.stderr) }));
    });
  }

  it('drops a volume without a type, so its mount is undefined', async () => {
    const job = await read('missing.nomad.hcl');
    delete (job.TaskGroups[0]!.Volumes.data as { Type?: string }).Type;
    job.TaskGroups[0]!.Volumes.data!.Type = '';
    expect(() => registerableJob(job)).toThrow('Volume Mount (0) references undefined volume data');
  });
});

const ready = (name: string, access = 'single-node-writer', namespace = 'default'): ServerHostVolume => ({
  ID: `id-${name}`,
  Name: name,
  Namespace: namespace,
  State: 'ready',
  RequestedCapabilities: [{ AccessMode: access, AttachmentMode: 'file-system' }],
});

function node(volumes: ServerHostVolume[], extra: Partial<NodeView> = {}): NodeView {
  return {
    hostVolumes: new Map(volumes.map((v) => [v.Name, { ID: v.ID, Path: `/v/${v.ID}`, ReadOnly: false }])),
    volumes: new Map(volumes.map((v) => [v.ID, v])),
    proposed: [],
    jobOf: () => undefined,
    ...extra,
  };
}

describe("placement by the scheduler's host volume rules", () => {
  const check = async (file: string, view: NodeView, index = 0) => {
    const job = registerableJob(await read(file));
    return infeasibility(job, job.TaskGroups[0]!, allocName(job, 'g', index), view);
  };

  it('places a writer on a ready volume offering single-node-writer', async () =>
    expect(await check('sticky.nomad.hcl', node([ready('shared')]))).toBeUndefined());

  it('refuses read_only against the default capability (reader-only is not offered)', async () => {
    expect(await check('ro-default-caps.nomad.hcl', node([ready('shared')]))).toBe(MISSING_HOST_VOLUMES);
    expect(await check('reader-ok.nomad.hcl', node([ready('shared')]))).toBe(MISSING_HOST_VOLUMES);
    expect(await check('reader-ok.nomad.hcl', node([ready('shared', 'single-node-reader-only')]))).toBeUndefined();
  });

  it('refuses a volume that is missing, not ready, or in another namespace', async () => {
    expect(await check('missing.nomad.hcl', node([ready('shared')]))).toBe(MISSING_HOST_VOLUMES);
    expect(await check('sticky.nomad.hcl', node([{ ...ready('shared'), State: 'pending' }]))).toBe(
      MISSING_HOST_VOLUMES,
    );
    expect(await check('sticky.nomad.hcl', node([ready('shared', 'single-node-writer', 'prod')]))).toBe(
      MISSING_HOST_VOLUMES,
    );
  });

  it('names per_alloc volumes source[N]: the third allocation of pa has no pa[2]', async () => {
    const view = node([ready('pa[0]'), ready('pa[1]')]);
    expect(await check('per-alloc.nomad.hcl', view, 0)).toBeUndefined();
    expect(await check('per-alloc.nomad.hcl', view, 1)).toBeUndefined();
    expect(await check('per-alloc-3.nomad.hcl', view, 2)).toBe(MISSING_HOST_VOLUMES);
  });

  it('lets one single-node-single-writer write; a second writer and a later reader are refused', async () => {
    const writer1 = registerableJob(await read('writer1.nomad.hcl'));
    const view = node([ready('ssw', 'single-node-single-writer')]);
    expect(await check('writer2.nomad.hcl', view)).toBeUndefined();
    const busy = {
      ...view,
      proposed: [{ Name: 'writer1.g[0]', Namespace: 'default', JobID: 'writer1', TaskGroup: 'g' }],
      jobOf: (_ns: string, id: string) => (id === 'writer1' ? writer1 : undefined),
    };
    expect(await check('writer2.nomad.hcl', busy)).toBe(MISSING_HOST_VOLUMES);
    const reader = await read('writer2.nomad.hcl');
    reader.TaskGroups[0]!.Volumes.data!.ReadOnly = true;
    expect(infeasibility(reader, reader.TaskGroups[0]!, 'writer2.g[0]', busy)).toBe(MISSING_HOST_VOLUMES);
    // A writer whose job was purged still counts (Nomad 2.0.5's fix: unavailable, not a panic).
    expect(await check('writer2.nomad.hcl', { ...busy, jobOf: () => undefined })).toBe(MISSING_HOST_VOLUMES);
  });

  it('refuses sticky on a static volume, and a writer on a read-only static volume', async () => {
    const statics = (readOnly: boolean): NodeView => ({
      ...node([]),
      hostVolumes: new Map([['shared', { ID: '', Path: '/srv/shared', ReadOnly: readOnly }]]),
    });
    expect(await check('sticky.nomad.hcl', statics(false))).toBe(MISSING_HOST_VOLUMES);
    expect(
      await check('writer1.nomad.hcl', {
        ...statics(true),
        hostVolumes: new Map([['ssw', { ID: '', Path: '/s', ReadOnly: true }]]),
      }),
    ).toBe(MISSING_HOST_VOLUMES);
    expect(await check('reader-ok.nomad.hcl', statics(true))).toBeUndefined();
  });

  it('filters a task whose driver the node lacks before any volume', async () => {
    const job = await read('sticky.nomad.hcl');
    job.TaskGroups[0]!.Tasks[0]!.Driver = 'docker';
    expect(infeasibility(job, job.TaskGroups[0]!, 'sticky.g[0]', node([ready('shared')]))).toBe(MISSING_DRIVERS);
  });
});
