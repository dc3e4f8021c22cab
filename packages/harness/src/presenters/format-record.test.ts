import { describe, expect, it } from 'vitest';
import type { InstallResult, RemoveResult } from '../record/install-recorder.js';
import type { ReplayReport } from '../record/replay.js';
import { recordText, removeText, replayText } from './format-record.js';

/** What `dhv record`, `dhv record --remove` and `dhv replay` print (record/*.test.ts pin the results they print). */

const FOLDER = '/srv/nomad/plugins/.dhv-record/odd';
const installed: InstallResult = {
  pluginId: 'odd',
  pluginPath: '/srv/nomad/plugins/odd',
  original: `${FOLDER}/odd`,
  log: `${FOLDER}/calls.jsonl`,
  pluginDiesWithRecorder: true,
  cleared: [],
};

describe('dhv record', () => {
  it('says where the calls go and how to put the plugin back, with the command as it was invoked', () => {
    expect(recordText(installed, 'dhv')).toBe(
      [
        `Recording odd: each call is appended to ${FOLDER}/calls.jsonl`,
        `The plugin itself is kept at ${FOLDER}/odd; \`dhv record --remove /srv/nomad/plugins/odd\` puts it back.`,
      ].join('\n'),
    );
  });

  it('first names what an earlier record killed half-way had left, and it cleared', () => {
    const text = recordText({ ...installed, cleared: [`${FOLDER}/odd`, `${FOLDER}/state.json`] }, 'npx dhv');
    expect(text.split('\n')).toEqual([
      `Cleared ${FOLDER}/odd, left by a dhv record that did not finish`,
      `Cleared ${FOLDER}/state.json, left by a dhv record that did not finish`,
      `Recording odd: each call is appended to ${FOLDER}/calls.jsonl`,
      `The plugin itself is kept at ${FOLDER}/odd; \`npx dhv record --remove /srv/nomad/plugins/odd\` puts it back.`,
    ]);
  });
});

describe('dhv record --remove', () => {
  const removed = (outcome: RemoveResult['outcome'], log?: string, cleared: string[] = []): RemoveResult => ({
    pluginId: 'odd',
    pluginPath: '/srv/nomad/plugins/odd',
    log,
    outcome,
    cleared,
  });

  it('says the plugin is back and where the recorded calls stay', () => {
    expect(removeText(removed('restored', `${FOLDER}/calls.jsonl`))).toBe(
      `Restored /srv/nomad/plugins/odd: the plugin is back, unchanged\nThe recorded calls stay in ${FOLDER}/calls.jsonl`,
    );
  });

  it('says what it finished of an interrupted run, and that there was nothing to do', () => {
    expect(
      removeText(removed('finished-interrupted', '/tmp/calls.jsonl', [`${FOLDER}/state.json`])).split('\n'),
    ).toEqual([
      `Cleared ${FOLDER}/state.json, left by a dhv record that did not finish`,
      '/srv/nomad/plugins/odd is the plugin itself again',
      'The recorded calls stay in /tmp/calls.jsonl',
    ]);
    expect(removeText(removed('not-recording'))).toBe('/srv/nomad/plugins/odd is not being recorded; nothing to do');
  });
});

describe('dhv replay', () => {
  const VOLUME_ID = '1e1d4540-14f9-2515-8502-24d46291717d';
  const report: ReplayReport = {
    trace: '/tmp/calls.jsonl',
    plugin: '/tmp/changed',
    pluginId: 'odd',
    calls: 3,
    same: 1,
    differ: 2,
    otherPlugins: {},
    skipped: [],
    differing: [
      {
        index: 1,
        where: 'line 1',
        operation: 'fingerprint',
        differences: [
          { field: 'stdout', recorded: '{"version": "1.0.0"}\n', replayed: '{"version": "1.1.0"}\n' },
          { field: 'version', recorded: '1.0.0', replayed: '1.1.0' },
        ],
      },
      {
        index: 3,
        where: 'step 2, call 1',
        operation: 'delete',
        volumeId: VOLUME_ID,
        differences: [{ field: 'exit', recorded: 'exit 3', replayed: 'exit 0' }],
      },
    ],
    pluginMs: 61.4,
    recordedMs: 15,
    cleanupProblems: [],
  };

  it('gives the counts and both times, then each differing call with each field, recorded then replayed, quoted', () => {
    expect(replayText(report)).toBe(
      [
        'Replayed 3 call(s) of odd against /tmp/changed: 1 same, 2 differ',
        'The plugin ran 0.06 s; when recorded, 0.01 s',
        '',
        'Call 1 (line 1): fingerprint',
        '  stdout:',
        '    recorded: "{\\"version\\": \\"1.0.0\\"}\\n"',
        '    replayed: "{\\"version\\": \\"1.1.0\\"}\\n"',
        '  version:',
        '    recorded: "1.0.0"',
        '    replayed: "1.1.0"',
        '',
        `Call 3 (step 2, call 1): delete ${VOLUME_ID}`,
        '  exit:',
        '    recorded: "exit 3"',
        '    replayed: "exit 0"',
      ].join('\n'),
    );
  });

  it('says what it left out and skipped and what the sandbox kept, and times of 10 s and more to a tenth', () => {
    const text = replayText({
      ...report,
      same: 3,
      differ: 0,
      differing: [],
      otherPlugins: { other: 2, mkdir: 1 },
      skipped: ['line 4: not JSON (a line cut short?)'],
      pluginMs: 12_345,
      recordedMs: null,
      cleanupProblems: ['/tmp/dhv-replay-x/agent/volumes/v is still mounted'],
    });
    expect(text.split('\n')).toEqual([
      'Replayed 3 call(s) of odd against /tmp/changed: 3 same, 0 differ',
      'The plugin ran 12.3 s',
      'Left out: 2 call(s) of other, 1 call(s) of mkdir (--id names another plugin)',
      'Skipped line 4: not JSON (a line cut short?)',
      'warning: the sandbox was not fully removed: /tmp/dhv-replay-x/agent/volumes/v is still mounted',
    ]);
  });
});
