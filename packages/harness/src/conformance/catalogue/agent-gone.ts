import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildEnvironment } from '@dhv/sdk/client';
import { readCreatedPath } from '../inspect.js';
import { describeRun, succeeded } from '../raw-run.js';
import type { Check, CheckContext } from '../types.js';
import { NEEDS_WORKING_CREATE } from './needs-working-create.js';
import { added, listTree } from './volume-files.js';

/** How long the stopped agent still reads the create's output: the stop lands while the plugin works. */
const AGENT_STOPS_AFTER_S = '0.05';

/**
 * A real Nomad agent that stops (SIGINT, a restart of its service) sends the plugins it
 * runs no signal (measured on Nomad 2.0.5: test/vectors/real-agent/README.md, "Measured by
 * hand"). The plugin goes on alone, its stdout and stderr without a reader, so its answer
 * is lost; the servers keep no volume and the user's `nomad volume create` fails
 * (`HostVolume.Create error: EOF`). The user's next try is a new volume with a new ID.
 * dhv's own agent kills its plugins instead (docs/nomad-differences.md); this program
 * stands in for a real one.
 */
function stoppedAgent(plugin: string): string {
  return [
    '#!/bin/sh',
    `# dhv check: the agent stops ${AGENT_STOPS_AFTER_S} s into this call and sends the plugin no signal.`,
    `${JSON.stringify(plugin)} "$@" 2>&1 | { /bin/sleep ${AGENT_STOPS_AFTER_S}; }`,
    'exit 0',
    '',
  ].join('\n');
}

export const agentGoneChecks: readonly Check[] = [
  {
    id: 'create.agent-gone',
    area: 'create',
    title:
      "A create whose agent stops part way (no signal sent, its output no longer read, as a real agent stops) leaves the name usable: the user's retry under a new volume ID succeeds.",
    protocolRef: 'PROTOCOL.md § create',
    severity: 'recommended',
    gradeReason:
      "a real agent that stops sends its running plugins no signal: the create finishes alone, its answer lost, and the servers keep no volume; the user's retry is a new volume ID, and a plugin that still holds the name for the lost one refuses it until someone removes what it left by hand (dhv's own agent kills its plugins instead)",
    asks: '2 volumes of one name at the capacities given, the first created with nobody reading its answer',
    needs: NEEDS_WORKING_CREATE,
    async run(ctx: CheckContext) {
      const lost = ctx.newVolume();
      const agent = join(ctx.sandbox, 'stopped-agent');
      await writeFile(agent, stoppedAgent(ctx.plugin), { mode: 0o755 });
      ctx.cleanup(() => ctx.delete(ctx.deleteRequest(lost, '')));
      const before = await listTree(ctx.sandbox);
      await ctx.runRaw(['create'], buildEnvironment('create', lost, ctx.plugin), { executable: agent });
      const left = added(before, await listTree(ctx.sandbox));

      const retry = ctx.newVolume({ volumeName: lost.volumeName });
      const run = await ctx.runAsAgent('create', retry);
      if (succeeded(run)) {
        const path = readCreatedPath(run.stdout);
        ctx.cleanup(() => ctx.delete(ctx.deleteRequest(retry, path.ok ? path.value : '')));
      }
      const leftovers =
        left.length === 0
          ? 'it left nothing'
          : `it left ${left.slice(0, 3).join(', ')}${left.length > 3 ? ` and ${left.length - 3} more` : ''}, known to no one (the servers kept no volume ${lost.volumeId})`;
      if (!succeeded(run))
        ctx.fail(
          `the retry of volume "${lost.volumeName}" under a new ID failed (${describeRun(run)}) after a create of that name whose agent stopped: ${leftovers}. On a real client that name stays refused until someone removes it by hand`,
        );
      ctx.note(`a create whose agent stopped: ${leftovers}; the retry under a new ID succeeded`);
    },
  },
];
