import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = dirname(fileURLToPath(import.meta.url));

/** Every module `entry` loads, static and dynamic imports alike, followed through the source. */
function importGraph(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:^|\n)\s*(import|export)(\s+type)?[^'"]*?from\s+'([^']+)'|import\('([^']+)'\)/g)) {
      if (m[2]) continue; // type-only: erased
      const spec = m[3] ?? m[4]!;
      if (spec.startsWith('.')) visit(join(dirname(file), spec.replace(/\.js$/, '.ts')));
      else packages.add(spec);
    }
  };
  visit(join(SRC, entry));
  return { files: [...files].map((f) => relative(SRC, f)).sort(), packages: [...packages].sort() };
}

describe('the SDK entries', () => {
  it.each(['index.ts', 'plugin.ts'])('%s (the plugin side) loads no agent-side module and no zod', (entry) => {
    const { files, packages } = importGraph(entry);
    expect(files.filter((f) => f.startsWith('client'))).toEqual([]);
    expect(packages.filter((p) => !p.startsWith('node:'))).toEqual([]);
  });

  it('client.ts holds the agent side', () => {
    expect(importGraph('client.ts').files).toContain('client/spawn-plugin.ts');
  });
});
