import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { REPO_ROOT } from './support/kit.js';

const SDK = join(REPO_ROOT, 'packages/sdk');

/** Whether `name` is written in a code span of `page` (alone, or in a call like `name(args)`). */
const named = (page: string, name: string) =>
  new RegExp(`\`[^\`\\n]*(?<![\\w$])${name}(?![\\w$])[^\`\\n]*\``).test(page);

test('every export of every @dhv/sdk entry point is named in the SDK README', async () => {
  const manifest = JSON.parse(await readFile(join(SDK, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { default?: string }>;
  };
  const readme = await readFile(join(SDK, 'README.md'), 'utf8');
  const missing: string[] = [];
  for (const [entry, target] of Object.entries(manifest.exports)) {
    const file = typeof target === 'string' ? target : target.default;
    if (!file?.endsWith('.js')) continue;
    const module = (await import(join(SDK, file))) as Record<string, unknown>;
    for (const name of Object.keys(module)) if (!named(readme, name)) missing.push(`${entry}: ${name}`);
  }
  expect(missing).toEqual([]);
});

test('the check finds a name only in a code span of its own, not inside a longer one', () => {
  expect(named('`parseSize(text)`', 'parseSize')).toBe(true);
  expect(named('`parseSizeExactly`', 'parseSize')).toBe(false);
  expect(named('parseSize, in prose', 'parseSize')).toBe(false);
});
