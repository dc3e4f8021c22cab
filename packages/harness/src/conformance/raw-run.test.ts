import { expect, test } from 'vitest';
import { clip, lastLines, stackTraceIn } from './raw-run.js';

test('a plugin message is shown whole, never cut mid-phrase', () => {
  const said = `/bin/sh: 1: /opt/storage-tools/bin/provision-volume-with-a-rather-long-name --pool tank --dataset volumes --quota 16MiB --reservation 16MiB --compression on: No such file or directory`;
  expect(said.length).toBeGreaterThan(160);
  expect(clip(said)).toBe(said);
  expect(clip('first line\n\n  second   line\n')).toBe('first line second line');
});

test('lines past the limit are left out whole, and the cut says how many', () => {
  const lines = Array.from({ length: 30 }, (_, i) => `line ${i} of the plugin's log, which goes on`);
  const shown = clip(lines.join('\n'), 100);
  expect(shown).toBe(`${lines[0]} ${lines[1]} … (28 more lines)`);
});

test('one line longer than the limit (a blob, not a message) is cut at a word, saying how much is left out', () => {
  const blob = `${'word '.repeat(200)}end`;
  const shown = clip(blob, 50);
  expect(shown).toMatch(/^(word ){9}word … \(\d+ more characters\)$/);
  expect(Number(/\((\d+) more/.exec(shown)![1]) + shown.indexOf(' …')).toBe(blob.length);
});

test("a plugin's stderr is shown by its last lines, on one line, and the start of a long one is cut", () => {
  expect(lastLines('')).toBe('');
  expect(lastLines('starting\n\nmounting /v/a\n  mount: /v/a: already mounted  \nexit\n')).toBe(
    'mounting /v/a | mount: /v/a: already mounted | exit',
  );
  expect(lastLines(`${'x'.repeat(500)}\nend`, 3, 20)).toBe(`… ${'x'.repeat(14)} | end`);
});

test("a plugin's stack trace is shown by its exception and first frames, saying when the plugin is minified", () => {
  const readable = [
    'crash create: boom',
    "TypeError: Cannot read properties of undefined (reading 'size')",
    '    at readState (/src/plugin.ts:4:25)',
    '    at Object.create (/src/plugin.ts:9:20)',
  ].join('\n');
  expect(stackTraceIn(readable)).toBe(
    "\nthe plugin's stack trace: TypeError: Cannot read properties of undefined (reading 'size')\n" +
      '  at readState (/src/plugin.ts:4:25)\n  at Object.create (/src/plugin.ts:9:20)',
  );
  const minified = [
    'TypeError: x',
    ...Array.from({ length: 6 }, (_, i) => `    at f${i} (/dist/crash:11:${1300 + i})`),
  ];
  expect(stackTraceIn(minified.join('\n')).split('\n').slice(-2)).toEqual([
    '  … (2 more frames)',
    '(the plugin is minified: `dhv build --sourcemap` makes these frames name its source files and lines)',
  ]);
  expect(stackTraceIn('mount: /v/a: already mounted\n')).toBe('');
});
