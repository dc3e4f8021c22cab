import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { CreateRequest, DeleteRequest, Operation } from '@dhv/sdk';
import {
  PluginError,
  answeredValue,
  goQuote,
  runInProcess,
  type DecodedValue,
  type Discovery,
  type OperationResult,
  type PluginCall,
  type PluginRunner,
  type ResponseAnswer,
} from '@dhv/sdk/client';

/** One call the fake answered, as the caller made it. */
export interface FakeRun<Op extends Operation = Operation> {
  operation: Op;
  pluginId: string;
  request: Op extends 'create' ? CreateRequest : Op extends 'delete' ? DeleteRequest : Record<string, never>;
  timeoutMs: number | undefined;
  signal: AbortSignal | undefined;
}

/**
 * A plugin runner in process, for testing the agent's rules without plugin processes:
 * the plugin dir holds `plugins` (each at `version`), every call is recorded in `calls`,
 * and `onCreate` / `onDelete` / `onFingerprint` say what each operation answers. An answer
 * that throws (see `failure`) is the plugin failing, reported as a real run's PluginError.
 * By default create answers `<volumes dir>/<volume id>` with `capacity_min` bytes and makes
 * that folder (a plugin reports what exists); delete succeeds.
 */
export class FakePluginRunner implements PluginRunner {
  readonly calls: FakeRun[] = [];
  readonly plugins: Set<string>;
  version = '1.0.0';
  /** Make the folder create answered, as a plugin would have. */
  makePaths = true;
  onCreate: (run: FakeRun<'create'>) => Promise<ResponseAnswer['create']> = async (run) => ({
    path: `${run.request.volumesDir}/${run.request.volumeId}`,
    bytes: run.request.capacityMinBytes,
  });
  onDelete: (run: FakeRun<'delete'>) => Promise<void> = async () => {};
  onFingerprint: (run: FakeRun<'fingerprint'>) => Promise<ResponseAnswer['fingerprint']> = async () => ({
    version: this.version,
    rawVersion: this.version,
  });

  constructor(plugins: Iterable<string> = []) {
    this.plugins = new Set(plugins);
  }

  /** The error a plugin's failed run gives, worded as the agent words it (`error creating volume ...: <reason>`). */
  static failure(run: FakeRun, reason: string): PluginError {
    const volumeId = (run.request as { volumeId?: string }).volumeId;
    return new PluginError('PLUGIN_FAILED', `exit status 1: ${reason}`, {
      pluginId: run.pluginId,
      executable: `/fake/${run.pluginId}`,
      operation: run.operation,
      volumeId,
      exitCode: 1,
      pluginMessage: reason,
      runError: 'exit status 1',
    });
  }

  async run<Op extends Operation>(operation: Op, call: PluginCall<Op>): Promise<OperationResult<Op>> {
    const pluginDir = typeof call.plugin === 'string' ? '' : call.plugin.pluginDir;
    const pluginId =
      typeof call.plugin === 'string' ? (call.pluginId ?? call.plugin.split('/').pop()!) : call.plugin.pluginId;
    const run = {
      operation,
      pluginId,
      request: call.request,
      timeoutMs: call.timeoutMs,
      signal: call.signal,
    } as unknown as FakeRun<Op>;
    this.calls.push(run as FakeRun);
    const answered = {
      pluginId,
      executable: typeof call.plugin === 'string' ? call.plugin : join(pluginDir, pluginId),
      builtin: false,
      operation,
      environment: {},
    };
    const result = await runInProcess(answered, async () => {
      if (typeof call.plugin !== 'string') await this.lookup(pluginDir, pluginId);
      return this.answer(run);
    });
    // As a process's run: exit 0 when it answered, the failure's exit status when it failed.
    result.exitCode = result.ok ? 0 : (result.error.exitCode ?? null);
    return result;
  }

  async lookup(pluginDir: string, pluginId: string): Promise<string> {
    const executable = join(pluginDir, pluginId);
    if (!this.plugins.has(pluginId)) {
      const nomadMessage = `no such plugin: ${goQuote(pluginId)}`;
      throw new PluginError('PLUGIN_NOT_FOUND', nomadMessage, {
        pluginId,
        executable,
        operation: 'resolve',
        nomadMessage,
      });
    }
    return executable;
  }

  async discover(pluginDir: string): Promise<Discovery> {
    return {
      plugins: [...this.plugins].map((id) => ({
        id,
        executable: join(pluginDir, id),
        version: this.version,
        durationMs: 0,
        stderr: '',
        warnings: [],
      })),
      skipped: [],
      logs: [],
    };
  }

  private async answer<Op extends Operation>(run: FakeRun<Op>): Promise<DecodedValue[Op]> {
    switch (run.operation) {
      case 'create': {
        const value = await this.onCreate(run as FakeRun<'create'>);
        if (this.makePaths) await mkdir(value.path, { recursive: true });
        return answeredValue('create', value) as DecodedValue[Op];
      }
      case 'delete':
        await this.onDelete(run as FakeRun<'delete'>);
        return {} as DecodedValue[Op];
      default:
        return answeredValue(
          'fingerprint',
          await this.onFingerprint(run as FakeRun<'fingerprint'>),
        ) as DecodedValue[Op];
    }
  }
}
