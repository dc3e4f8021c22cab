import { describe, expect, it } from 'vitest';
import { PluginError, describeExit } from './errors.js';

describe("describeExit words an exit as Go's os/exec does", () => {
  it.each([
    [1, null, 'exit status 1'],
    [0, null, 'exit status 0'],
    [null, 'SIGKILL', 'signal: killed'],
    [null, 'SIGTERM', 'signal: terminated'],
    [null, 'SIGSEGV', 'signal: segmentation fault'],
    [null, 'SIGWINCH', 'signal: SIGWINCH'],
  ] as const)('%s / %s is "%s"', (code, signal, text) => {
    expect(describeExit(code, signal)).toBe(text);
  });
});

describe('PluginError', () => {
  it("puts what dhv adds on the lines after Nomad's words, never inside them", () => {
    const err = new PluginError('PLUGIN_NOT_FOUND', 'no such plugin: "p"', {
      pluginId: 'p',
      executable: '/plugins/p',
      operation: 'resolve',
      nomadMessage: 'no such plugin: "p"',
      hints: ['/plugins/p does not exist'],
    });
    expect(err.message).toBe('no such plugin: "p"\n/plugins/p does not exist');
    expect(err.nomadMessage).toBe('no such plugin: "p"');
  });

  const details = {
    pluginId: 'p',
    executable: '/plugins/p',
    volumeId: 'v-1',
    exitCode: 1,
    signal: null,
    stdout: '{"error":"x"}',
    stderr: 'log',
    pluginMessage: 'x',
  };

  it.each([
    ['create', 'error creating volume "v-1" with plugin "p": exit status 1: x'],
    ['delete', 'error deleting volume "v-1" with plugin "p": exit status 1: x'],
    ['fingerprint', 'error fingerprinting plugin "p": exit status 1: x'],
    ['resolve', 'error looking up plugin "p": exit status 1: x'],
    ['resize', 'error running operation "resize" of plugin "p": exit status 1: x'],
  ])('reads like the agent for %s', (operation, message) => {
    expect(new PluginError('PLUGIN_FAILED', 'exit status 1: x', { ...details, operation }).message).toBe(message);
  });

  it('carries everything a program needs, also as JSON', () => {
    const err = new PluginError('PLUGIN_FAILED', 'exit status 1: x', { ...details, operation: 'create' });
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('PluginError');
    expect(JSON.parse(JSON.stringify(err))).toEqual({
      code: 'PLUGIN_FAILED',
      message: 'error creating volume "v-1" with plugin "p": exit status 1: x',
      nomadMessage: 'error creating volume "v-1" with plugin "p": exit status 1: x',
      hints: [],
      reason: 'exit status 1: x',
      pluginId: 'p',
      executable: '/plugins/p',
      operation: 'create',
      volumeId: 'v-1',
      exitCode: 1,
      signal: null,
      pluginMessage: 'x',
      stdout: '{"error":"x"}',
      stderr: 'log',
      truncated: false,
    });
  });
});
