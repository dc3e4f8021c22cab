import { basename } from 'node:path';
import {
  buildEnvironment,
  fingerprintRequest,
  judgeRun,
  outputText,
  PluginError,
  type PluginRun,
} from '@dhv/sdk/client';
import { AGENT_TIMEOUT_MS } from '@dhv/sdk/plugin';
import { describeRun, lastLines, stderrBeyond, succeeded } from '../raw-run.js';
import type { CheckContext, CreateInput, DeleteInput } from '../types.js';
import type { CreateTime } from './create-speed.js';
import { watchFor, type KillEvent } from './kill-events.js';
import { Violation } from './violation.js';

/** A create is killed this long after it starts: "at its deadline", without waiting the agent's 60 s. */
export const KILL_AFTER_MS = 300;
/** A slow fingerprint is measured this often before it counts: one slow run on a busy host proves nothing. */
const FINGERPRINT_TRIES = 3;

/**
 * The agent's calls as the explorer makes them, through the check's context: a plugin's
 * failure becomes the Violation `explore.calls-succeed`, in Nomad's words, with what the
 * plugin said last on stderr. `what` names the call in that verdict.
 */
export class AgentCalls {
  /** The last lines each call wrote on stderr that answered, newest last: what a step's verdict shows when no call failed. */
  readonly said: { what: string; stderr: string }[] = [];

  constructor(
    private readonly ctx: CheckContext,
    /** Where a create of a new volume that succeeded records its capacity and its time. */
    private readonly createTimes: CreateTime[] = [],
  ) {}

  /**
   * `timed`: a new volume's first create, whose time tells the plugin's speed; `executable`:
   * a program of dhv's own that runs the plugin under a host condition (crowded-table.ts).
   */
  async create(
    request: CreateInput,
    what: string,
    { timed = false, executable }: { timed?: boolean; executable?: string | undefined } = {},
  ): Promise<string> {
    try {
      const result =
        executable === undefined ? await this.ctx.create(request) : await this.through(executable, request);
      this.heard(what, result.stderr);
      const capacityBytes = result.bytes > 0n ? result.bytes : BigInt(request.capacityMinBytes ?? 0);
      if (timed) this.createTimes.push({ capacityBytes, durationMs: result.durationMs });
      return result.path;
    } catch (err) {
      if (err instanceof PluginError) throw callFailed(what, err);
      throw err;
    }
  }

  /** A create run by `executable` in the plugin's place, read as the agent reads the plugin's own. */
  private async through(executable: string, request: CreateInput) {
    const timeoutMs = AGENT_TIMEOUT_MS.create;
    const run = await this.ctx.runRaw(['create'], buildEnvironment('create', request, this.ctx.plugin), {
      executable,
      timeoutMs,
    });
    const context = {
      pluginId: basename(this.ctx.plugin),
      executable: this.ctx.plugin,
      volumeId: request.volumeId,
      timeoutMs,
    };
    const judged = judgeRun('create', run, context);
    if (!judged.ok) throw judged.error;
    const { path, bytes } = judged.value;
    return { path, bytes, stderr: outputText(run.stderr), durationMs: run.durationMs };
  }

  async delete(request: DeleteInput, what: string): Promise<void> {
    try {
      this.heard(what, (await this.ctx.delete(request)).stderr);
    } catch (err) {
      if (err instanceof PluginError) throw callFailed(what, err);
      throw err;
    }
  }

  private heard(what: string, stderr: string): void {
    const said = lastLines(stderr);
    if (said) this.said.push({ what, stderr: said });
  }

  /**
   * A create killed `killAt` ms (default KILL_AFTER_MS) after it started, or at the plugin's own
   * first `killAt` seen in its volumes dir (killedAtEvent); left unjudged: the agent gave up on it.
   */
  async killedCreate(
    request: CreateInput,
    killAt: number | KillEvent = KILL_AFTER_MS,
  ): Promise<{ run: PluginRun; killed: boolean }> {
    if (typeof killAt === 'string') return this.killedAtEvent(request, killAt);
    const run = await this.ctx.runRaw(['create'], buildEnvironment('create', request, this.ctx.plugin), {
      timeoutMs: Math.max(1, killAt),
    });
    return { run, killed: run.timedOut };
  }

  /**
   * A create killed as soon as `event` of its own is seen in its volumes dir (kill-events.ts);
   * one in which it is never seen runs to its end, within the agent's deadline.
   */
  private async killedAtEvent(request: CreateInput, event: KillEvent): Promise<{ run: PluginRun; killed: boolean }> {
    const watch = await watchFor(event, request.volumesDir);
    try {
      const run = await this.ctx.runRaw(['create'], buildEnvironment('create', request, this.ctx.plugin), {
        timeoutMs: AGENT_TIMEOUT_MS.create,
        signal: watch.seen,
      });
      return { run, killed: watch.seen.aborted || run.timedOut };
    } finally {
      watch.stop();
    }
  }

  /** The fingerprint within the agent's deadline, tried FINGERPRINT_TRIES times; `live`: the volumes it is made with. */
  async fingerprint(live: number): Promise<void> {
    const env = buildEnvironment('fingerprint', fingerprintRequest(), this.ctx.plugin);
    const seen: string[] = [];
    for (let i = 0; i < FINGERPRINT_TRIES; i++) {
      const run = await this.ctx.runRaw(['fingerprint'], env, { timeoutMs: AGENT_TIMEOUT_MS.fingerprint });
      if (succeeded(run) && run.durationMs <= AGENT_TIMEOUT_MS.fingerprint) return;
      seen.push(run.timedOut ? `killed at ${AGENT_TIMEOUT_MS.fingerprint} ms` : describeRun(run));
    }
    throw new Violation(
      'explore.fingerprint-fast',
      `with ${live} volumes, fingerprint did not answer within the agent's ${AGENT_TIMEOUT_MS.fingerprint} ms (${seen.join('; ')}): the agent skips the plugin`,
    );
  }
}

/** A call that failed, in Nomad's words, then what the plugin itself said last on stderr. */
function callFailed(what: string, err: PluginError): Violation {
  const said = stderrBeyond(err.stderr, err.nomadMessage);
  const stderr = said ? ` (the plugin's stderr ended: ${said})` : '';
  const violation = new Violation('explore.calls-succeed', `the ${what} failed: ${err.nomadMessage}${stderr}`);
  violation.stderr = '';
  return violation;
}
