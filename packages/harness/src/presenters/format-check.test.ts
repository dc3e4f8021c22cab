import { describe, expect, test } from 'vitest';
import { buildReport } from '../conformance/runner.js';
import { resolveSettings } from '../conformance/settings.js';
import type { Check, CheckResult, Severity, Status } from '../conformance/types.js';
import { CheckPresenter, useColor, type TextSink } from './format-check.js';

function result(id: string, status: Status, severity: Severity = 'required', reason?: string): CheckResult {
  return {
    id,
    area: id.split('.')[0] as CheckResult['area'],
    title: `the requirement of ${id}.`,
    protocolRef: 'PROTOCOL.md § create',
    severity,
    gradeReason: 'it matters',
    status,
    ...(reason !== undefined ? { reason } : {}),
    notes: [],
    durationMs: 12,
  };
}

const check = (id: string) => ({ id }) as Check;

/** A stream that keeps each write apart, so a test sees when each piece was written. */
function sink(isTTY = false): TextSink & { writes: string[] } {
  const writes: string[] = [];
  return { writes, isTTY, columns: 60, write: (text: string) => writes.push(text) };
}

const report = (results: CheckResult[], strict = false) =>
  buildReport('/p/plugin', resolveSettings(), new Date(0), 1500, results, strict);

describe('the streamed dhv check output', () => {
  test('each result is written the moment its check finishes, in the order they finish', () => {
    const out = sink();
    const presenter = new CheckPresenter({ out, idWidth: 20, strict: false });
    presenter.header('/p/plugin');
    presenter.progress({ kind: 'start', check: check('create.path'), index: 0, total: 2 });
    presenter.progress({ kind: 'start', check: check('create.bytes'), index: 0, total: 2 });
    expect(out.writes).toEqual(['dhv check /p/plugin\n\n']);
    presenter.progress({ kind: 'done', result: result('create.bytes', 'pass'), index: 0, total: 2 });
    expect(out.writes.at(-1)).toMatch(/^PASS {2}create\.bytes {13}12 ms\n$/);
    presenter.progress({
      kind: 'done',
      result: result('create.path', 'fail', 'required', 'no path'),
      index: 1,
      total: 2,
    });
    expect(out.writes.at(-1)).toMatch(/^FAIL {2}create\.path {14}12 ms\n {6}no path\n {6}requirement: /);
    expect(out.writes.join('')).not.toContain('\x1b');
  });

  test('the closing line names the failed checks, required and recommended', () => {
    const out = sink();
    const presenter = new CheckPresenter({ out, idWidth: 20, strict: false });
    presenter.summary(
      report([
        result('create.path', 'fail'),
        result('delete.idempotent', 'fail'),
        result('delete.uses-created-path', 'fail', 'recommended'),
        result('create.bytes', 'pass'),
      ]),
    );
    const lines = out.writes.join('').trimEnd().split('\n');
    expect(lines.at(-1)).toBe(
      'FAILED: required checks failed: create.path, delete.idempotent; recommended checks failed (warnings): delete.uses-created-path',
    );
    const ok = sink();
    new CheckPresenter({ out: ok, idWidth: 20, strict: false }).summary(
      report([result('errors.unknown-operation', 'fail', 'recommended'), result('create.bytes', 'pass')]),
    );
    expect(ok.writes.join('').trimEnd().split('\n').at(-1)).toBe(
      'OK: no required check failed; recommended checks failed (warnings): errors.unknown-operation',
    );
  });

  test('on a terminal a status line names what runs, and is erased before each result and before the summary', () => {
    const out = sink(true);
    const status = sink(true);
    const presenter = new CheckPresenter({ out, status, idWidth: 20, strict: false });
    presenter.progress({ kind: 'start', check: check('create.path'), index: 0, total: 3 });
    presenter.progress({ kind: 'start', check: check('create.a-very-long-check-name-indeed'), index: 0, total: 3 });
    expect(status.writes.at(-1)).toBe('\r\x1b[2K[0/3] running create.path, create.a-very-long-check-name-i…');
    expect(status.writes.at(-1)!.length - '\r\x1b[2K'.length).toBe(59);
    presenter.progress({ kind: 'done', result: result('create.path', 'pass'), index: 0, total: 3 });
    expect(status.writes.slice(-2)).toEqual([
      '\r\x1b[2K',
      '\r\x1b[2K[1/3] running create.a-very-long-check-name-indeed …',
    ]);
    presenter.summary(report([result('create.path', 'pass')]));
    expect(status.writes.at(-1)).toBe('\r\x1b[2K');
  });

  test('a pipe gets no status line and no control characters', () => {
    const out = sink(false);
    const status = sink(false);
    const presenter = new CheckPresenter({ out, status, style: useColor(out, {}), idWidth: 20, strict: false });
    presenter.progress({ kind: 'start', check: check('create.path'), index: 0, total: 1 });
    presenter.progress({ kind: 'done', result: result('create.path', 'fail'), index: 0, total: 1 });
    presenter.summary(report([result('create.path', 'fail')]));
    expect(status.writes).toEqual([]);
    expect(out.writes.join('')).not.toMatch(/[\x1b\r]/);
  });

  test('colour on a terminal, none when NO_COLOR is set (to anything but the empty string) or on a pipe', () => {
    const tty = sink(true);
    const colored = (env: NodeJS.ProcessEnv, to: TextSink = tty) => {
      const out = sink();
      new CheckPresenter({ out, style: useColor(to, env), idWidth: 20, strict: false }).result(
        result('create.path', 'fail'),
      );
      return out.writes.join('').includes('\x1b[');
    };
    expect(colored({})).toBe(true);
    expect(colored({ NO_COLOR: '' })).toBe(true);
    expect(colored({ NO_COLOR: '1' })).toBe(false);
    expect(colored({}, sink(false))).toBe(false);
    // FORCE_COLOR decides first, as for Node: a CI log gets colour, `0` and `false` get none.
    expect(colored({ FORCE_COLOR: '1' }, sink(false))).toBe(true);
    expect(colored({ FORCE_COLOR: '' }, sink(false))).toBe(true);
    expect(colored({ FORCE_COLOR: '0' })).toBe(false);
    expect(colored({ FORCE_COLOR: 'false' })).toBe(false);
    const out = sink();
    new CheckPresenter({ out, style: useColor(tty, {}), idWidth: 12, strict: false }).result(
      result('create.path', 'pass'),
    );
    expect(out.writes[0]).toBe('\x1b[32mPASS\x1b[39m  create.path      12 ms\n');
  });
});

describe('skips that share one cause', () => {
  test('are one line naming the check that failed and how many it kept from running', () => {
    const out = sink();
    const presenter = new CheckPresenter({ out, idWidth: 20, strict: false });
    const done = (r: CheckResult) => presenter.progress({ kind: 'done', result: r, index: 0, total: 5 });
    done(result('discovery.fingerprint', 'fail', 'required', 'exit status 1'));
    done(result('environment.dhv-only', 'skip', 'required', 'needs discovery.fingerprint, which failed'));
    done(result('create.path', 'skip', 'required', 'needs environment.dhv-only, which was skipped'));
    done(result('create.expands', 'skip', 'recommended', 'needs environment.dhv-only, which was skipped'));
    done(result('errors.unknown-operation', 'skip', 'recommended', 'the plugin says it has no such operation'));
    const results = [
      result('discovery.fingerprint', 'fail'),
      result('environment.dhv-only', 'skip'),
      result('create.path', 'skip'),
      result('create.expands', 'skip', 'recommended'),
      result('errors.unknown-operation', 'skip', 'recommended'),
    ];
    presenter.summary(report(results));
    const text = out.writes.join('');
    expect(text.match(/^SKIP/gm)).toHaveLength(2);
    expect(text).toContain('SKIP  errors.unknown-operation');
    expect(text).toContain(
      'SKIP  3 checks not run because discovery.fingerprint failed (2 required: not judged; --json and --junit list each)\n',
    );
    expect(text).not.toContain('create.path');
  });
});

describe('notes several checks share', () => {
  test("are printed with the first of them only (the explorer's one run serves five checks)", () => {
    const out = sink();
    const presenter = new CheckPresenter({ out, idWidth: 24, strict: false });
    const search = 'explored 40 random sequences (300 calls) in 9.0 s; seed 7 (--seed 7 runs the same sequences)';
    for (const id of ['explore.volumes-survive', 'explore.volumes-distinct', 'explore.nothing-left'])
      presenter.progress({ kind: 'done', result: { ...result(id, 'pass'), notes: [search] }, index: 0, total: 3 });
    expect(out.writes.join('').split(search)).toHaveLength(2);
  });
});
