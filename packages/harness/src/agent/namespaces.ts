import type { AgentStore } from './state/store.js';
import type { NamespaceRecord } from './state/namespace-records.js';
import { isTerminal, jobStatusOf } from './allocations/alloc-status.js';
import type { Jobs } from './allocations/jobs.js';
import {
  noSuchNamespaceForVolume,
  refuseInvalidNamespace,
  refuseNamespaceDelete,
} from './servers/namespace-endpoint.js';

export type { NamespaceRecord } from './state/namespace-records.js';

/**
 * Namespaces as Nomad's servers keep them: `default` always there, others applied and
 * deleted by name. An apply or a delete holds the agent exclusive, so no volume create or
 * register and no job run (each checks its namespace under the agent's shared hold, and
 * keeps it until its record is written) runs beside it.
 */
export class Namespaces {
  constructor(
    private readonly store: AgentStore,
    private readonly jobs: Jobs,
  ) {}

  list(): Promise<NamespaceRecord[]> {
    return this.store.namespaces.all();
  }

  /** Nomad's prefix list: every namespace whose name starts with `prefix`. */
  async withPrefix(prefix: string): Promise<NamespaceRecord[]> {
    return (await this.list()).filter((n) => n.Name.startsWith(prefix));
  }

  /**
   * `namespace apply NAME`: creates the namespace or updates it, keeping its description
   * unless one is given (as Nomad's CLI reads the namespace before it writes it back).
   */
  async apply(name: string, description?: string): Promise<NamespaceRecord> {
    // Exclusive, as Nomad's servers apply one write at a time: two applies at once would
    // read the same highest index and write the same ModifyIndex.
    return this.store.lock.exclusive({ doing: `applying namespace "${name}"` }, async () => {
      const existing = await this.store.namespaces.get(name);
      const wanted = description ?? existing?.Description ?? '';
      refuseInvalidNamespace(name, wanted);
      const index = Math.max(...(await this.list()).map((n) => n.ModifyIndex)) + 1;
      const record: NamespaceRecord = {
        Name: name,
        Description: wanted,
        CreateIndex: existing?.CreateIndex ?? index,
        ModifyIndex: index,
      };
      await this.store.namespaces.put(record);
      return record;
    });
  }

  /** `namespace delete NAME`: refused for `default`, a missing namespace, or one with live jobs or allocations. Host volumes stay, as in Nomad. */
  async delete(name: string): Promise<void> {
    await this.store.lock.exclusive({ doing: `deleting namespace "${name}"` }, async () => {
      const exists = (await this.store.namespaces.get(name)) !== undefined;
      const allocs = exists ? (await this.jobs.allocs()).filter((a) => a.Namespace === name) : [];
      const jobs = exists ? (await this.jobs.jobs()).filter((j) => j.Job.Namespace === name) : [];
      refuseNamespaceDelete(name, exists, {
        nonTerminalJobs: jobs.some(
          (j) =>
            jobStatusOf(
              j,
              allocs.filter((a) => a.JobID === j.Job.ID),
            ) !== 'dead',
        ),
        nonTerminalAllocs: allocs.some((a) => !isTerminal(a)),
      });
      await this.store.namespaces.remove(name);
    });
  }

  /** Throws the servers' `no such namespace` unless `name` exists. */
  async requireForVolume(name: string): Promise<void> {
    if ((await this.store.namespaces.get(name)) === undefined) throw noSuchNamespaceForVolume(name);
  }
}
