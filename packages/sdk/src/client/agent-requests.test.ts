import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  cleanupDeleteRequest,
  createRequest,
  deleteRequest,
  fingerprintRequest,
  restoreRequest,
  type AgentFields,
} from './agent-requests.js';
import { buildEnvironment, type RequestInput } from './environment.js';

/**
 * Every request the builders make, as the environment a plugin gets, against what Nomad's
 * own client sent in the same scenario (test/vectors/nomad-agent/agent-scenarios.json).
 */
interface Step {
  op: string;
  request?: {
    volumeId: string;
    volumeName: string;
    namespace: string;
    nodeId: string;
    capacityMinBytes?: string;
    capacityMaxBytes?: string;
    parameters: Record<string, string> | null;
    hostPath?: string;
  };
  nomad: { calls?: Array<{ argv: string[]; env: string[] }> };
}
interface Scenario {
  name: string;
  agent: AgentFields;
  steps: Step[];
}

const vectors = JSON.parse(
  readFileSync(
    fileURLToPath(new URL('../../../../test/vectors/nomad-agent/agent-scenarios.json', import.meta.url)),
    'utf8',
  ),
) as { scenarios: Scenario[] };

const scenario = (name: string) => vectors.scenarios.find((s) => s.name === name)!;
const PLUGIN = '/unused/plugin';
const env = (operation: 'fingerprint' | 'create' | 'delete', request: RequestInput<typeof operation>) =>
  Object.entries(buildEnvironment(operation, request as never, PLUGIN)).map(([k, v]) => `${k}=${v}`);
/** The environments Nomad gave the plugin in a step, by operation, in the order it ran them. */
const sent = (step: Step, operation: string) =>
  (step.nomad.calls ?? []).filter((c) => c.argv[1] === operation).map((c) => c.env);

function createOf(agent: AgentFields, step: Step) {
  const r = step.request!;
  return createRequest(agent, {
    namespace: r.namespace,
    volumeName: r.volumeName,
    volumeId: r.volumeId,
    nodeId: r.nodeId,
    capacityMinBytes: BigInt(r.capacityMinBytes ?? 0),
    capacityMaxBytes: BigInt(r.capacityMaxBytes ?? 0),
    parameters: r.parameters,
  });
}

describe("what the agent sends a plugin, as Nomad's client sent it", () => {
  const flow = scenario('seed-flow');
  const [firstStart, create, restart, remove] = flow.steps as [Step, Step, Step, Step];

  it('a fingerprint carries DHV_OPERATION alone', () => {
    expect(sent(firstStart, 'fingerprint')).toEqual([env('fingerprint', fingerprintRequest())]);
  });

  it("a create carries the agent's settings, then the volume and its capacities", () => {
    expect(sent(create, 'create')).toEqual([env('create', createOf(flow.agent, create))]);
  });

  it('a restore sends the saved create request again', () => {
    expect(sent(restart, 'create')).toEqual([env('create', restoreRequest(createOf(flow.agent, create)))]);
  });

  it('a delete names the volume as its create did, without capacities, and the path the servers recorded', () => {
    const request = deleteRequest(createOf(flow.agent, create), remove.request!.hostPath!);
    expect(request).not.toHaveProperty('capacityMinBytes');
    expect(sent(remove, 'delete')).toEqual([env('delete', request)]);
  });

  it("the cleanup delete names the volumes dir and no name or namespace, when the first create's state write fails", () => {
    const failing = scenario('initial-create-state-write-fails');
    const step = failing.steps[1]!;
    expect(sent(step, 'delete')).toEqual([env('delete', cleanupDeleteRequest(createOf(failing.agent, step)))]);
  });

  it("keeps the shape it is given: a check's request with defaults left out stays one", () => {
    const given = { volumesDir: '/v', volumeName: 'n', volumeId: 'i', nodeId: 'x', capacityMinBytes: 5 };
    expect(deleteRequest(given, '/v/i')).toEqual({
      volumesDir: '/v',
      volumeName: 'n',
      volumeId: 'i',
      nodeId: 'x',
      createdPath: '/v/i',
    });
    expect(cleanupDeleteRequest(given)).toEqual({
      volumesDir: '/v',
      volumeName: '',
      namespace: '',
      volumeId: 'i',
      nodeId: 'x',
      createdPath: '/v',
    });
  });
});
