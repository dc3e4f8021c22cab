import { describe, expect, it } from 'vitest';
import type { StartReport } from '../agent/agent.js';
import { fingerprintJson, startReportJson } from './agent-json.js';

const fingerprint = {
  plugins: [{ id: 'p', version: '1.0.0', builtin: false, executable: '/x/p', stderr: '', warnings: [] }],
  skipped: [
    {
      id: 'bad',
      executable: '/x/bad',
      reason: 'exit status 1',
      logged: { level: 'error' as const, message: 'error running plugin', error: 'exit status 1' },
    },
  ],
  attributes: { 'plugins.host_volume.p.version': '1.0.0' },
  logs: [{ level: 'debug' as const, message: 'plugin dir does not exist', dir: '/x' }],
  nomadCrash: { pluginId: 'nv', panic: 'nil pointer' },
};

/** Every key at every level, maps (Attributes) excepted. */
function keys(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) keys(v, out);
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      if (k !== 'Attributes' && k !== 'Error') keys(v, out);
    }
  return out;
}

describe("agent --json in Nomad's API casing", () => {
  it('spells every key of fingerprint and restart in PascalCase with ID, PluginID, NodeID', () => {
    const restart = startReportJson({
      nodeId: 'n',
      fingerprint,
      restored: [],
      restoreNotes: {},
      failed: [],
      unreadable: [],
      warnings: [],
      reboot: { unmounted: ['/m'], detached: [{ device: '/dev/loop0', backingFile: '/f' }], skipped: [] },
    } satisfies StartReport);
    for (const key of keys(restart)) expect(key, key).toMatch(/^[A-Z]/);
    expect(restart).toMatchObject({ NodeID: 'n', Reboot: { Detached: [{ Device: '/dev/loop0', BackingFile: '/f' }] } });
    expect(fingerprintJson(fingerprint)).toMatchObject({
      Attributes: { 'plugins.host_volume.p.version': '1.0.0' },
      Plugins: [{ ID: 'p', Version: '1.0.0' }],
      Skipped: [{ ID: 'bad', Reason: 'exit status 1', Logged: { Level: 'error', Error: 'exit status 1' } }],
      Logs: [{ Level: 'debug', Dir: '/x' }],
      NomadCrash: { PluginID: 'nv', Panic: 'nil pointer' },
    });
  });
});
