import { dirname } from 'node:path';
import { buildEnvironment, type PluginRun, type RequestInput } from '@dhv/sdk/client';
import { AGENT_TIMEOUT_MS, SYSTEM_DIRS } from '@dhv/sdk/plugin';
import { readCreatedPath } from '../inspect.js';
import { describeRun, succeeded } from '../raw-run.js';
import type { Check, CheckContext } from '../types.js';

/** What a login shell would have given the plugin: what a plugin tested only by hand silently relies on. */
function friendlyEnvironment(): Record<string, string> {
  return { PATH: SYSTEM_DIRS.join(':'), HOME: process.env.HOME ?? '/root', TMPDIR: '/tmp', LANG: 'C.UTF-8' };
}

type AgentOp = 'create' | 'delete';

/**
 * Runs the same operation twice on two copies of a volume: once as the agent does
 * (only DHV_*, an unrelated working directory) and once with a shell's environment from
 * the plugin's own directory. Only a difference between the two is this check's concern;
 * a plugin that fails both ways is judged by the create and delete checks.
 */
async function compare<Op extends AgentOp>(
  ctx: CheckContext,
  operation: Op,
  asAgent: RequestInput<Op>,
  friendly: RequestInput<Op>,
) {
  const agentRun = await ctx.runAsAgent(operation, asAgent);
  const friendlyRun = await ctx.runRaw(
    [operation],
    { ...buildEnvironment(operation, friendly, ctx.plugin), ...friendlyEnvironment() },
    {
      cwd: dirname(ctx.plugin),
      timeoutMs: AGENT_TIMEOUT_MS[operation],
    },
  );
  return { agentRun, friendlyRun };
}

function differs(ctx: CheckContext, operation: string, agentRun: PluginRun, friendlyRun: PluginRun): void {
  if (!succeeded(agentRun) && succeeded(friendlyRun)) {
    ctx.fail(
      `${operation} fails with only the DHV_* variables (${describeRun(agentRun)}) but works with PATH and HOME set: ` +
        'the agent replaces the environment, so find programs by absolute path and do not read HOME',
    );
  }
}

export const environmentChecks: Check[] = [
  {
    id: 'environment.dhv-only',
    area: 'environment',
    title:
      'create and delete work with only the DHV_* variables (no PATH, no HOME) and from an unrelated working directory.',
    protocolRef: 'PROTOCOL.md § Running an operation',
    severity: 'required',
    gradeReason:
      'the agent replaces the environment and runs from its own working directory: a plugin that needs PATH, HOME or its own directory fails every create or delete',
    // The agent never runs create or delete with a plugin whose fingerprint fails.
    asks: '2 volumes at the capacities given, each created and deleted',
    needs: ['discovery.fingerprint-succeeds'],
    async run(ctx: CheckContext) {
      const agentVolume = ctx.newVolume();
      const friendlyVolume = ctx.newVolume();
      let agentPath = '';
      let friendlyPath = '';
      ctx.cleanup(() => ctx.delete(ctx.deleteRequest(friendlyVolume, friendlyPath)));
      ctx.cleanup(() => ctx.delete(ctx.deleteRequest(agentVolume, agentPath)));

      const created = await compare(ctx, 'create', agentVolume, friendlyVolume);
      agentPath = pathOf(created.agentRun);
      friendlyPath = pathOf(created.friendlyRun);
      differs(ctx, 'create', created.agentRun, created.friendlyRun);

      const deleted = await compare(
        ctx,
        'delete',
        ctx.deleteRequest(agentVolume, agentPath),
        ctx.deleteRequest(friendlyVolume, friendlyPath),
      );
      differs(ctx, 'delete', deleted.agentRun, deleted.friendlyRun);
      if (!succeeded(created.friendlyRun) || !succeeded(deleted.friendlyRun)) {
        ctx.note('the plugin fails even with PATH and HOME set; the create and delete checks say why');
      }
    },
  },
];

function pathOf(run: PluginRun): string {
  const read = readCreatedPath(run.stdout);
  return read.ok ? read.value : '';
}
