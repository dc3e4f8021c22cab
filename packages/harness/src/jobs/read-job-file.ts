import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { AgentError } from '../errors/agent-error.js';
import { parseHcl2 } from './hcl2.js';
import {
  DEFAULT_KILL_SIGNAL,
  DEFAULT_KILL_TIMEOUT_NS,
  defaultVolumeRequest,
  type Job,
  type Task,
  type TaskGroup,
  type VolumeMount,
  type VolumeRequest,
} from './job-spec.js';

export interface ReadJob {
  job: Job;
  /** The parts of the spec dhv does not model, by where they are (`group "g": network`): accepted and ignored. */
  unmodelled: string[];
}

type Body = Record<string, unknown>;

/**
 * Reads a job spec as `nomad job run` does: HCL2 (read by HashiCorp's HCL library), the
 * same in HCL's JSON syntax, or with `json` the API's JSON (`{"Job": {...}}` or the job
 * alone, as `nomad job run -json`).
 */
export async function readJobFile(path: string, { json = false } = {}): Promise<ReadJob> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new AgentError('SPEC_INVALID', `Error getting job struct: ${(err as Error).message}`, { file: path });
  }
  return readJobText(text, basename(path), { json });
}

export async function readJobText(text: string, filename: string, { json = false } = {}): Promise<ReadJob> {
  if (json) return apiJob(parseJson(text, filename));
  const body = filename.endsWith('.json') ? parseJson(text, filename) : await parseHcl2(filename, text);
  return fromHcl(body);
}

function parseJson(text: string, filename: string): Body {
  try {
    const value = JSON.parse(text) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Body;
  } catch (err) {
    throw new AgentError('SPEC_INVALID', `Error parsing job file from ${filename}: ${(err as Error).message}`, {
      file: filename,
    });
  }
  throw new AgentError('SPEC_INVALID', `Error parsing job file from ${filename}: not a JSON object`, {
    file: filename,
  });
}

/** A block's bodies by label: hcl2json gives `{label: [body]}`, HCL's JSON syntax `{label: body}` too. */
function labelled(value: unknown): Array<[string, Body]> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value as Body).flatMap(([label, v]) => bodies(v).map((b) => [label, b] as [string, Body]));
}

/** An unlabelled block's bodies: `[body, ...]` or one `body`. */
function bodies(value: unknown): Body[] {
  const list = Array.isArray(value) ? value : [value];
  return list.filter((v): v is Body => !!v && typeof v === 'object' && !Array.isArray(v));
}

const str = (v: unknown, fallback = ''): string => (v === undefined || v === null ? fallback : String(v));
const bool = (v: unknown): boolean => v === true || v === 'true';
const num = (v: unknown, fallback: number): number => (v === undefined || v === null ? fallback : Number(v));

/** Go duration text (`5s`, `1m30s`, `250ms`) to nanoseconds, as the jobspec's `kill_timeout`. */
function durationNs(v: unknown, fallback: number): number {
  if (v === undefined || v === null) return fallback;
  if (typeof v === 'number') return v;
  const units: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
  let total = 0;
  const text = String(v);
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g;
  let matched = '';
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * units[m[2]!]!;
    matched += m[0];
  }
  if (matched !== text) throw new AgentError('SPEC_INVALID', `time: invalid duration "${text}"`, {});
  return total;
}

class Unmodelled {
  readonly found: string[] = [];
  note(where: string, body: Body, known: readonly string[]): void {
    for (const key of Object.keys(body)) if (!known.includes(key)) this.found.push(where ? `${where}: ${key}` : key);
  }
}

const JOB_KEYS = ['type', 'namespace', 'group'] as const;
const GROUP_KEYS = ['count', 'volume', 'task', 'update'] as const;
const VOLUME_KEYS = [
  'type',
  'source',
  'read_only',
  'access_mode',
  'attachment_mode',
  'per_alloc',
  'sticky',
  'mount_options',
];
const TASK_KEYS = ['driver', 'config', 'user', 'volume_mount', 'resources', 'kill_timeout', 'kill_signal'];
const MOUNT_KEYS = ['volume', 'destination', 'read_only', 'propagation_mode', 'selinux_label'];

/** A group's volume request, from its block in either form: `spelled` is a field's key there (`read_only` in HCL, `ReadOnly` in JSON). */
function volumeRequest(
  alias: string,
  v: Body,
  spelled: (field: keyof VolumeRequest) => string,
  MountOptions: VolumeRequest['MountOptions'],
): VolumeRequest {
  return {
    ...defaultVolumeRequest(alias),
    Type: str(v[spelled('Type')]),
    Source: str(v[spelled('Source')]),
    ReadOnly: bool(v[spelled('ReadOnly')]),
    AccessMode: str(v[spelled('AccessMode')]),
    AttachmentMode: str(v[spelled('AttachmentMode')]),
    PerAlloc: bool(v[spelled('PerAlloc')]),
    Sticky: bool(v[spelled('Sticky')]),
    MountOptions,
  };
}

/** A field's key in a job file's HCL: `ReadOnly` is `read_only`. */
const hclSpelling = (field: string): string => field.replace(/(?<=[a-z])[A-Z]/g, (c) => `_${c}`).toLowerCase();

function fromHcl(root: Body): ReadJob {
  const jobs = labelled(root.job);
  if (jobs.length !== 1) {
    throw new AgentError(
      'SPEC_INVALID',
      jobs.length === 0
        ? "Error getting job struct: 'job' block not found"
        : 'Error getting job struct: only one job block is allowed',
      {},
    );
  }
  const unmodelled = new Unmodelled();
  unmodelled.note('', root, ['job']);
  const [id, body] = jobs[0]!;
  unmodelled.note(`job "${id}"`, body, JOB_KEYS);
  const TaskGroups = labelled(body.group).map(([name, g]): TaskGroup => {
    const where = `group "${name}"`;
    unmodelled.note(where, g, GROUP_KEYS);
    const Volumes: Record<string, VolumeRequest> = {};
    for (const [alias, v] of labelled(g.volume)) {
      unmodelled.note(`${where} volume "${alias}"`, v, VOLUME_KEYS);
      const mountOptions = v.mount_options === undefined ? null : (bodies(v.mount_options)[0] ?? {});
      Volumes[alias] = volumeRequest(alias, v, hclSpelling, mountOptions);
    }
    const update = bodies(g.update)[0];
    if (update) unmodelled.note(`${where} update`, update, ['canary']);
    return {
      Name: name,
      Count: num(g.count, 1),
      Volumes,
      Tasks: labelled(g.task).map(([taskName, t]) => hclTask(taskName, t, `${where} task "${taskName}"`, unmodelled)),
      Update: update ? { Canary: num(update.canary, 0) } : null,
    };
  });
  return canonicalJob(id, id, body.namespace, body.type, TaskGroups, unmodelled);
}

function hclTask(name: string, t: Body, where: string, unmodelled: Unmodelled): Task {
  unmodelled.note(where, t, TASK_KEYS);
  const config = bodies(t.config)[0] ?? {};
  unmodelled.note(`${where} config`, config, ['command', 'args']);
  const resources = bodies(t.resources)[0] ?? {};
  unmodelled.note(`${where} resources`, resources, ['cpu', 'memory']);
  const VolumeMounts = bodies(t.volume_mount).map((m, i): VolumeMount => {
    unmodelled.note(`${where} volume_mount ${i}`, m, MOUNT_KEYS);
    return {
      Volume: str(m.volume),
      Destination: str(m.destination),
      ReadOnly: bool(m.read_only),
      PropagationMode: str(m.propagation_mode, 'private'),
      SELinuxLabel: str(m.selinux_label),
    };
  });
  return {
    Name: name,
    Driver: str(t.driver),
    User: str(t.user),
    Config: {
      ...(config.command !== undefined ? { command: str(config.command) } : {}),
      ...(config.args !== undefined
        ? { args: (Array.isArray(config.args) ? config.args : [config.args]).map((a) => str(a)) }
        : {}),
    },
    VolumeMounts,
    Resources: { CPU: num(resources.cpu, 100), MemoryMB: num(resources.memory, 300) },
    KillTimeout: durationNs(t.kill_timeout, DEFAULT_KILL_TIMEOUT_NS),
    KillSignal: str(t.kill_signal, DEFAULT_KILL_SIGNAL) || DEFAULT_KILL_SIGNAL,
  };
}

/** The API's JSON (`nomad job run -json`): `{"Job": {...}}` or the job itself, defaults as Nomad's Canonicalize. */
function apiJob(root: Body): ReadJob {
  const j = (root.Job && typeof root.Job === 'object' ? root.Job : root) as Body;
  const unmodelled = new Unmodelled();
  const id = str(j.ID ?? j.Name);
  const TaskGroups = (Array.isArray(j.TaskGroups) ? (j.TaskGroups as Body[]) : []).map((g): TaskGroup => {
    const Volumes: Record<string, VolumeRequest> = {};
    for (const [alias, v] of Object.entries((g.Volumes ?? {}) as Record<string, Body>)) {
      const mountOptions = (v.MountOptions as Record<string, unknown> | null | undefined) ?? null;
      Volumes[alias] = volumeRequest(alias, v, (field) => field, mountOptions);
    }
    const update = g.Update as Body | null | undefined;
    for (const key of ['Networks', 'Services']) if (g[key]) unmodelled.found.push(`group "${str(g.Name)}": ${key}`);
    return {
      Name: str(g.Name),
      Count: num(g.Count, 1),
      Volumes,
      Tasks: (Array.isArray(g.Tasks) ? (g.Tasks as Body[]) : []).map((t): Task => {
        for (const key of ['Services', 'Templates', 'Artifacts', 'Vault'])
          if (t[key]) unmodelled.found.push(`group "${str(g.Name)}" task "${str(t.Name)}": ${key}`);
        const config = (t.Config ?? {}) as Body;
        const resources = (t.Resources ?? {}) as Body;
        return {
          Name: str(t.Name),
          Driver: str(t.Driver),
          User: str(t.User),
          Config: {
            ...(config.command !== undefined ? { command: str(config.command) } : {}),
            ...(Array.isArray(config.args) ? { args: config.args.map((a) => str(a)) } : {}),
          },
          VolumeMounts: (Array.isArray(t.VolumeMounts) ? (t.VolumeMounts as Body[]) : []).map((m) => ({
            Volume: str(m.Volume),
            Destination: str(m.Destination),
            ReadOnly: bool(m.ReadOnly),
            PropagationMode: str(m.PropagationMode, 'private') || 'private',
            SELinuxLabel: str(m.SELinuxLabel),
          })),
          Resources: { CPU: num(resources.CPU, 100), MemoryMB: num(resources.MemoryMB, 300) },
          KillTimeout: num(t.KillTimeout, DEFAULT_KILL_TIMEOUT_NS),
          KillSignal: str(t.KillSignal, DEFAULT_KILL_SIGNAL) || DEFAULT_KILL_SIGNAL,
        };
      }),
      Update: update ? { Canary: num(update.Canary, 0) } : null,
    };
  });
  return canonicalJob(id, str(j.Name, id) || id, j.Namespace, j.Type, TaskGroups, unmodelled);
}

/** The job as Nomad's Canonicalize leaves it (namespace `default`, type `service`), not yet submitted. */
function canonicalJob(
  ID: string,
  Name: string,
  namespace: unknown,
  type: unknown,
  TaskGroups: TaskGroup[],
  unmodelled: Unmodelled,
): ReadJob {
  return {
    job: {
      ID,
      Name,
      Namespace: str(namespace, 'default') || 'default',
      Type: str(type, 'service') || 'service',
      TaskGroups,
      Version: 0,
      Stop: false,
      SubmitTime: 0,
    },
    unmodelled: unmodelled.found,
  };
}
