import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { CATALOGUE, type Check } from '@dhv/harness';
import { REPO_ROOT } from './support/kit.js';

/**
 * The check catalogue (packages/harness/src/conformance/catalogue/) is the one list of
 * checks: what the docs say of it is compared with it here, so a check added, renamed,
 * re-graded or re-worded is a failing row, never a stale copy.
 */
const HARNESS_README = 'packages/harness/README.md';
const TABLE_HEADER = '| check | severity | requirement | why this grade |';

/** A check as the harness README's table of every check shows it. */
function readmeRow(check: Check): string {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  return `| \`${check.id}\` | ${check.severity} | ${cell(check.title)} | ${cell(check.gradeReason)} |`;
}

/** The ID a README row names in its first column. */
const idOf = (row: string) => /^\| `([^`]+)` \|/.exec(row)?.[1] ?? row;

/** The rows of the table under TABLE_HEADER, as written. */
function tableRows(markdown: string): string[] {
  const lines = markdown.split('\n');
  const header = lines.indexOf(TABLE_HEADER);
  if (header < 0) return [];
  const rows: string[] = [];
  for (let i = header + 2; lines[i]?.startsWith('|'); i++) rows.push(lines[i]!);
  return rows;
}

/** Every row that differs from the catalogue, with the row the catalogue makes; empty when the table is the catalogue. */
function differingRows(rows: readonly string[], catalogue: readonly Check[]): string[] {
  const written = new Map(rows.map((row) => [idOf(row), row]));
  const differences: string[] = [];
  for (const check of catalogue) {
    const row = written.get(check.id);
    if (row === undefined) differences.push(`missing from the README: ${readmeRow(check)}`);
    else if (row !== readmeRow(check)) differences.push(`README:    ${row}\ncatalogue: ${readmeRow(check)}`);
  }
  const ids = new Set(catalogue.map((c) => c.id));
  for (const row of rows) if (!ids.has(idOf(row))) differences.push(`no such check in the catalogue: ${row}`);
  if (differences.length === 0 && rows.map(idOf).join() !== catalogue.map((c) => c.id).join())
    differences.push(`out of the catalogue's order; it is: ${catalogue.map((c) => c.id).join(', ')}`);
  return differences;
}

describe("the docs' copies of the check catalogue", () => {
  test("the harness README's table of every check is the catalogue, row by row and in order", async () => {
    const rows = tableRows(await readFile(join(REPO_ROOT, HARNESS_README), 'utf8'));
    expect(rows.length, `a table headed ${TABLE_HEADER} in ${HARNESS_README}`).toBeGreaterThan(0);
    expect(differingRows(rows, CATALOGUE)).toEqual([]);
  });

  test('the comparison names the row that differs, the row missing and the row for no check', () => {
    const [first, second, third] = CATALOGUE;
    const rows = [first!, second!, third!].map(readmeRow);
    expect(differingRows(rows, [first!, second!, third!])).toEqual([]);
    const regraded = { ...second!, severity: second!.severity === 'required' ? 'recommended' : 'required' } as Check;
    expect(differingRows(rows, [first!, regraded])).toEqual([
      `README:    ${rows[1]}\ncatalogue: ${readmeRow(regraded)}`,
      `no such check in the catalogue: ${rows[2]}`,
    ]);
    expect(differingRows([rows[0]!], [first!, second!])).toEqual([`missing from the README: ${rows[1]}`]);
    expect(differingRows([rows[1]!, rows[0]!], [first!, second!])).toEqual([
      `out of the catalogue's order; it is: ${first!.id}, ${second!.id}`,
    ]);
  });

  test('every check ID the docs name is a check of the catalogue', async () => {
    const pages = [
      'README.md',
      ...(await readdir(join(REPO_ROOT, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
      ...(await readdir(join(REPO_ROOT, 'packages'))).map((p) => `packages/${p}/README.md`),
    ];
    const ids = new Set(CATALOGUE.map((c) => c.id));
    const areas = [...new Set(CATALOGUE.map((c) => c.area))];
    const named = new RegExp(`\`((?:${areas.join('|')})\\.[a-z0-9-]+)\``, 'g');
    const unknown: string[] = [];
    for (const page of pages) {
      const text = await readFile(join(REPO_ROOT, page), 'utf8').catch(() => '');
      for (const [, id] of text.matchAll(named)) if (!ids.has(id!)) unknown.push(`${page}: ${id}`);
    }
    expect(unknown).toEqual([]);
  });
});
