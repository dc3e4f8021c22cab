import { describe, expect, it } from 'vitest';
import { definePlugin, type HandlerContext, type Invocation } from './define-plugin.js';
import { sampleCreateEnv } from '../protocol/__fixtures__/agent-environment.js';
import { runTool } from '../helpers/system-tools.js';

const createEnv = sampleCreateEnv();

/** A create of three steps, each undone by dropping its name from `made`. */
function threeSteps(made: string[], end: (ctx: HandlerContext) => void | Promise<void> = () => {}) {
  return definePlugin({
    name: 'test',
    version: '1.0.0',
    create: async (request, ctx) => {
      for (const what of ['image', 'attach', 'mount'])
        await ctx.step(
          what,
          () => made.push(what),
          () => void made.splice(made.indexOf(what), 1),
        );
      await end(ctx);
      return { path: `${request.volumesDir}/${request.volumeId}`, bytes: 0 };
    },
    delete: () => {},
  });
}

const create = (plugin: ReturnType<typeof threeSteps>, over: Partial<Invocation> = {}) =>
  plugin.invoke({ argv: ['create'], env: createEnv, ...over });

describe('ctx.undo', () => {
  it('drops the undo steps when the handler succeeds', async () => {
    const made: string[] = [];
    const result = await create(threeSteps(made));
    expect(result.exitCode).toBe(0);
    expect(made).toEqual(['image', 'attach', 'mount']);
    expect(result.stderr).toBe('');
  });

  it('undoes every step, newest first, when the handler throws, and answers with its error', async () => {
    const made: string[] = [];
    const order: string[] = [];
    const plugin = threeSteps(made, (ctx) => {
      ctx.undo('first extra', () => void order.push('first extra'));
      ctx.undo('second extra', () => void order.push('second extra'));
      throw new Error('mkfs failed');
    });
    const result = await create(plugin);
    expect(result.exitCode).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({ error: 'mkfs failed' });
    expect(made).toEqual([]);
    expect(order).toEqual(['second extra', 'first extra']);
    expect(result.stderr).toMatch(
      /undid: second extra\nundid: first extra\nundid: mount\nundid: attach\nundid: image\n/,
    );
  });

  it('undoes when the deadline (abortAfterMs) ends the handler', async () => {
    const made: string[] = [];
    const plugin = threeSteps(made, async (ctx) => {
      await new Promise((_, reject) =>
        ctx.signal.addEventListener('abort', () => reject(new Error(`stopped: ${ctx.signal.reason.message}`))),
      );
    });
    const result = await create(plugin, { abortAfterMs: 0 });
    expect(JSON.parse(result.stdout)).toEqual({ error: "stopped: the agent's 60s deadline is near" });
    expect(made).toEqual([]);
  });

  it('logs an undo that fails, runs the others, and keeps the original error', async () => {
    const made: string[] = [];
    const plugin = threeSteps(made, (ctx) => {
      ctx.undo('detach /dev/loop7', () => {
        throw new Error('device busy');
      });
      throw new Error('mount failed');
    });
    const result = await create(plugin);
    expect(JSON.parse(result.stdout)).toEqual({ error: 'mount failed' });
    expect(result.stderr).toContain('could not undo "detach /dev/loop7": device busy\n');
    expect(made).toEqual([]);
  });

  it('keeps what an undo writes to stdout out of the response', async () => {
    const plugin = threeSteps([], (ctx) => {
      ctx.undo('chatty', () => void console.log('cleaning up'));
      throw new Error('failed');
    });
    const result = await create(plugin);
    expect(JSON.parse(result.stdout)).toEqual({ error: 'failed' });
    expect(result.stderr).toContain('cleaning up');
  });
});

describe('invoke({ failAt })', () => {
  it.each([1, 2, 3])('fails at step %i and undoes the steps before it', async (n) => {
    const made: string[] = [];
    const result = await create(threeSteps(made), { failAt: { step: n } });
    const name = ['image', 'attach', 'mount'][n - 1];
    expect(JSON.parse(result.stdout)).toEqual({ error: `injected failure at step ${n} (${name})` });
    expect(made).toEqual([]);
    expect(result.stderr.match(/^undid: .*$/gm) ?? []).toEqual(
      ['image', 'attach', 'mount']
        .slice(0, n - 1)
        .reverse()
        .map((s) => `undid: ${s}`),
    );
  });

  it('fails at a step named', async () => {
    const made: string[] = [];
    const result = await create(threeSteps(made), { failAt: { step: 'mount' } });
    expect(JSON.parse(result.stdout)).toEqual({ error: 'injected failure at step 3 (mount)' });
    expect(made).toEqual([]);
  });

  it('fails the n-th tool call, or a tool named, before the tool runs', async () => {
    const ran: string[] = [];
    const plugin = definePlugin({
      name: 'test',
      version: '1.0.0',
      create: async (request, ctx) => {
        for (const tool of ['true', 'true', 'false']) {
          await runTool(tool, []).catch((err: { code?: string }) => {
            if (err.code === 'EINJECTED') throw err;
          });
          ran.push(tool);
          ctx.undo(`ran ${tool}`, () => void ran.pop());
        }
        return { path: `${request.volumesDir}/${request.volumeId}`, bytes: 0 };
      },
      delete: () => {},
    });
    const second = await plugin.invoke({ argv: ['create'], env: createEnv, failAt: { tool: 2 } });
    expect(JSON.parse(second.stdout)).toEqual({ error: 'injected failure at tool 2 (true)' });
    expect(ran).toEqual([]);
    const named = await plugin.invoke({ argv: ['create'], env: createEnv, failAt: { tool: 'false' } });
    expect(JSON.parse(named.stdout)).toEqual({ error: 'injected failure at tool 3 (false)' });
    expect(ran).toEqual([]);
    expect((await plugin.invoke({ argv: ['create'], env: createEnv })).exitCode).toBe(0);
    expect(ran).toEqual(['true', 'true', 'false']);
  });
});
