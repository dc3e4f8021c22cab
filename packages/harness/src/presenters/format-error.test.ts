import { Parser } from '@oclif/core';
import { describe, expect, it } from 'vitest';
import { judgeRun, pluginRunOf, PluginError, type PluginRun } from '@dhv/sdk/client';
import { AgentError } from '../errors/agent-error.js';
import { UsageError } from '../errors/dhv-error.js';
import { describeError, errorExitCode, errorJson } from './format-error.js';

const VOLUME_ID = '1e1d4540-14f9-2515-8502-24d46291717d';
const context = { pluginId: 'odd', executable: '/opt/plugins/odd', volumeId: VOLUME_ID, timeoutMs: 60_000 };

/** The error the agent makes of a run, read as every command reads it. */
function failed(operation: 'create' | 'delete' | 'fingerprint', run: Partial<PluginRun>): PluginError {
  const judged = judgeRun(operation, pluginRunOf({ argv: [operation], env: {}, ...run }), context);
  if (judged.ok) throw new Error('the run was meant to fail');
  return judged.error;
}

const out = (text: string) => Buffer.from(text);

/** oclif's own error for a flag it does not know: what a usage mistake looks like when it reaches format-error. */
async function unknownFlag(): Promise<Error> {
  return Parser.parse(['--nope'], { flags: {}, args: {}, strict: true }).then(
    () => {
      throw new Error('oclif accepted an unknown flag');
    },
    (err: Error) => err,
  );
}

describe('a plugin failure, for a person', () => {
  it("says Nomad's line, then the code, the executable and stderr, but not the stdout the line already quotes", () => {
    const err = failed('create', {
      exitCode: 1,
      stdout: out('{"error": "disk full"}\n'),
      stderr: out('trying /dev/loop3\nlosetup: failed\n\n'),
    });
    expect(describeError(err)).toBe(
      [
        `error creating volume "${VOLUME_ID}" with plugin "odd": exit status 1: disk full`,
        '  code: PLUGIN_FAILED',
        '  executable: /opt/plugins/odd',
        '  stderr:',
        '    trying /dev/loop3',
        '    losetup: failed',
        "  The plugin's message says why; `dhv check <plugin>` runs the conformance suite against it.",
      ].join('\n'),
    );
  });

  it('shows stdout that says more than the error line: an {"error"} document with other fields too', () => {
    const err = failed('create', { exitCode: 1, stdout: out('{"error": "disk full", "free": 0}') });
    expect(describeError(err)).toContain('\n  stdout:\n    {"error": "disk full", "free": 0}\n');
    expect(describeError(err)).not.toContain('stderr:');
  });

  it('says what a plugin that printed something other than one JSON document must print', () => {
    const err = failed('create', { exitCode: 0, stdout: out('not json') });
    expect(err.code).toBe('PLUGIN_BAD_OUTPUT');
    const text = describeError(err);
    expect(text.startsWith("invalid character 'o' in literal null (expecting 'u')\n")).toBe(true);
    // The message quotes stdout already: it is not repeated.
    expect(text).not.toContain('  stdout:');
    expect(
      text.endsWith(
        '\n  code: PLUGIN_BAD_OUTPUT\n  executable: /opt/plugins/odd\n' +
          '  A plugin must print exactly one JSON document to stdout (dhv check tests this).',
      ),
    ).toBe(true);
  });

  it('gives no next step for a plugin that cannot start: its diagnosis, in the message, is the fix', () => {
    const err = failed('fingerprint', {
      spawnError: Object.assign(new Error('spawn EACCES'), { code: 'EACCES' }),
      spawnProblem: 'its #! line names /usr/bin/nope, which is not there',
    });
    expect(describeError(err)).toBe(
      [
        'error fingerprinting plugin "odd": fork/exec /opt/plugins/odd: permission denied',
        '/opt/plugins/odd: its #! line names /usr/bin/nope, which is not there',
        '  code: PLUGIN_NOT_EXECUTABLE',
        '  executable: /opt/plugins/odd',
      ].join('\n'),
    );
  });

  it("tells each kind of failure what to do next, after Nomad's words", () => {
    const details = { pluginId: 'p', executable: '', operation: 'delete', volumeId: VOLUME_ID };
    const last = (code: PluginError['code']) =>
      describeError(new PluginError(code, 'x', details))
        .split('\n')
        .at(-1);
    expect(last('PLUGIN_NOT_FOUND')).toBe(
      '  Put the plugin in the plugin directory (--plugin-dir), or check the plugin_id.',
    );
    expect(last('PLUGIN_NOT_EXECUTABLE')).toBe(
      '  Make the plugin executable (chmod +x), with a #! line that works without PATH.',
    );
    expect(last('PLUGIN_TIMED_OUT')).toBe('  The agent kills a plugin at its deadline; make the operation faster.');
    expect(last('PLUGIN_ABORTED')).toBe('  The agent shut down while the plugin ran; run the command again.');
    // No executable known: no executable line.
    expect(
      describeError(new PluginError('PLUGIN_FAILED', 'exit status 2', details))
        .split('\n')
        .slice(0, 2),
    ).toEqual([`error deleting volume "${VOLUME_ID}" with plugin "p": exit status 2`, '  code: PLUGIN_FAILED']);
  });

  it('is the message alone for any other error, and the value as text for what is not one', () => {
    expect(describeError(new AgentError('VOLUME_NOT_FOUND', 'volume not found'))).toBe('volume not found');
    expect(describeError('plain words')).toBe('plain words');
  });
});

describe('an error, for a program', () => {
  it("is a dhv/v1 Error document: a plugin failure with every detail and the next step after the plugin's hints", () => {
    const err = failed('delete', { exitCode: 3, stdout: out('{"error": "busy"}'), stderr: out('held\n') });
    const doc = errorJson(err);
    expect(doc.apiVersion).toBe('dhv/v1');
    expect(doc.kind).toBe('Error');
    expect(doc.error).toMatchObject({
      code: 'PLUGIN_FAILED',
      nomadMessage: `error deleting volume "${VOLUME_ID}" with plugin "odd": exit status 3: busy`,
      pluginId: 'odd',
      operation: 'delete',
      volumeId: VOLUME_ID,
      exitCode: 3,
      pluginMessage: 'busy',
      stdout: '{"error": "busy"}',
      stderr: 'held\n',
      hints: ["The plugin's message says why; `dhv check <plugin>` runs the conformance suite against it."],
    });
    expect(doc.error).not.toHaveProperty('warnings');
  });

  it("carries a dhv error's own details, and its warnings with those said before it, each once", () => {
    const err = new UsageError('bad spec', 'SPEC_INVALID', { file: 'a.hcl', warnings: ['unknown key "x"'] });
    expect(errorJson(err, ['unknown key "x"', 'unknown key "y"'])).toEqual({
      apiVersion: 'dhv/v1',
      kind: 'Error',
      error: {
        code: 'SPEC_INVALID',
        message: 'bad spec',
        file: 'a.hcl',
        warnings: ['unknown key "x"', 'unknown key "y"'],
      },
    });
  });

  it("names oclif's usage mistakes USAGE, keeps another error's own string code, and calls the rest ERROR", async () => {
    const usage = await unknownFlag();
    expect(errorJson(usage).error).toEqual({ code: 'USAGE', message: usage.message });
    expect(usage.message).toContain('--nope');
    const fsError = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    expect(errorJson(fsError).error).toEqual({ code: 'EACCES', message: 'EACCES: permission denied' });
    expect(errorJson(Object.assign(new Error('odd'), { code: 7 })).error).toEqual({ code: 'ERROR', message: 'odd' });
    expect(errorJson(42, ['w']).error).toEqual({ code: 'ERROR', message: '42', warnings: ['w'] });
  });
});

describe('the exit status an error ends a command with', () => {
  it("is 2 for a usage mistake (oclif's or dhv's), the error's own for a dhv error, else 1", async () => {
    expect(errorExitCode(await unknownFlag())).toBe(2);
    expect(errorExitCode(new UsageError('missing argument'))).toBe(2);
    expect(errorExitCode(new AgentError('VOLUME_NOT_FOUND', 'volume not found'))).toBe(1);
    expect(errorExitCode(failed('create', { exitCode: 1 }))).toBe(1);
    expect(errorExitCode(new Error('anything'))).toBe(1);
  });
});
