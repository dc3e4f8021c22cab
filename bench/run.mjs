// Runs the benchmarks in bench/ (every *.bench.mjs, or only those named on the command
// line: `node bench/run.mjs fingerprint`), prints a table, and rewrites bench/RESULTS.md.
// Expects a build first (`npm run bench` does `npm run build` then this).
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { constants, cpus, loadavg } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as lib from './lib.mjs';
import { removeAllScratch, sweepDeadScratch } from './scratch.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const resultsFile = join(here, 'RESULTS.md');
const SUFFIX = '.bench.mjs';

const available = (await readdir(here)).filter((f) => f.endsWith(SUFFIX)).sort();
const wanted = process.argv.slice(2).map((name) => basename(name).replace(/\.bench\.mjs$/, ''));
const unknown = wanted.filter((name) => !available.includes(name + SUFFIX));
if (unknown.length > 0) {
  process.stderr.write(
    `no such benchmark: ${unknown.join(', ')} (available: ${available.map((f) => f.slice(0, -SUFFIX.length)).join(', ') || 'none'})\n`,
  );
  process.exit(2);
}
const selected = wanted.length > 0 ? wanted.map((name) => name + SUFFIX) : available;

// A run killed outright left its volumes and folders; an interrupted one removes its own.
for (const line of await sweepDeadScratch()) process.stdout.write(`${line}\n`);
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, async () => {
    stopping = true;
    process.stderr.write(`\n${signal}: removing this run's volumes and folders, then stopping\n`);
    await removeAllScratch();
    process.exit(128 + constants.signals[signal]);
  });
}

const machine = {
  cpu: cpus()[0]?.model.trim() ?? 'unknown',
  cores: cpus().length,
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
};
const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
// Named with the command: the bench's own settings, and what changes how long every node takes to start.
const benchEnv = Object.keys(process.env)
  .filter((name) => name.startsWith('DHV_BENCH_') || name === 'NODE_EXTRA_CA_CERTS' || name === 'NODE_OPTIONS')
  .sort()
  .map((name) => `${name}=${process.env[name]} `)
  .join('');
const command = `${benchEnv}node bench/run.mjs${wanted.length > 0 ? ` ${wanted.join(' ')}` : ''}`;

const fmt = (ms) => ms.toFixed(1);
const formatExtra = (n) => (Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en') : n.toFixed(1));

/**
 * Per row: median, min, max, and the ratio of its median to the baseline row's median
 * from the same run (or to the row named by its `vs`). A benchmark may add columns
 * (`columns: [name...]`, each row `extra: { name: samples }`), shown as medians.
 */
function summarize(result, file) {
  if (!result || !Array.isArray(result.rows) || result.rows.length === 0) {
    throw new Error(`${file}: run() must return { title, note, rows: [{ label, samplesMs, baseline? }] }`);
  }
  const baselines = result.rows.filter((r) => r.baseline);
  if (baselines.length > 1) throw new Error(`${file}: more than one row is marked baseline`);
  const baseMedian = baselines.length === 1 ? lib.median(baselines[0].samplesMs) : undefined;
  const medianOf = (label) => {
    const other = result.rows.find((r) => r.label === label);
    if (!other) throw new Error(`${file}: row ${JSON.stringify(label)} (named by a row's vs) does not exist`);
    return lib.median(other.samplesMs);
  };
  const columns = result.columns ?? [];
  const rows = result.rows.map((row) => {
    if (!Array.isArray(row.samplesMs) || row.samplesMs.length === 0)
      throw new Error(`${file}: row ${JSON.stringify(row.label)} has no samples`);
    const median = lib.median(row.samplesMs);
    const base = row.vs !== undefined ? medianOf(row.vs) : baseMedian;
    return {
      label: row.label,
      runs: row.samplesMs.length,
      median,
      min: lib.min(row.samplesMs),
      max: lib.max(row.samplesMs),
      ratio: base === undefined ? undefined : median / base,
      baseline: Boolean(row.baseline),
      target: row.target,
      extra: columns.map((c) => {
        const samples = (row.extra?.[c] ?? []).filter((v) => typeof v === 'number' && Number.isFinite(v));
        return samples.length === 0 ? '' : formatExtra(lib.median(samples));
      }),
    };
  });
  return { file, title: result.title ?? file, note: result.note ?? '', columns, rows };
}

function table(rows, columns = []) {
  const header = ['', 'runs', 'median ms', 'min ms', 'max ms', 'vs baseline', ...columns, 'target'];
  const lines = rows.map((r) => [
    r.label + (r.baseline && !/\bbaseline\b/i.test(r.label) ? ' (baseline)' : ''),
    String(r.runs),
    fmt(r.median),
    fmt(r.min),
    fmt(r.max),
    r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}×`,
    ...r.extra,
    r.target ?? '',
  ]);
  return [header, ...lines];
}

function printTable(summary) {
  const cells = table(summary.rows, summary.columns);
  const widths = cells[0].map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  process.stdout.write(`\n${summary.title}\n`);
  for (const row of cells)
    process.stdout.write(row.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ') + '\n');
}

function markdown(summary) {
  const cells = table(summary.rows, summary.columns);
  const out = [`## ${summary.title}`, '', `Source: \`bench/${summary.file}\`. ${summary.note}`.trim(), ''];
  out.push(`| ${cells[0].join(' | ')} |`, `|${cells[0].map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`);
  for (const row of cells.slice(1)) out.push(`| ${row.join(' | ')} |`);
  out.push(
    '',
    `Measured ${date} by \`${command}\` on ${machine.cpu} (${machine.cores} cores), node ${machine.node}, ${machine.platform}; ` +
      `load average ${summary.load} when it started and ${summary.loadAfter} when it ended (anything near or above the core count skews the figures).`,
    '',
  );
  return out.join('\n');
}

// RESULTS.md keeps one section per benchmark; running a subset replaces only those sections.
const START = (file) => `<!-- bench:${file} -->`;
const END = (file) => `<!-- /bench:${file} -->`;

async function readSections() {
  const sections = new Map();
  const text = await readFile(resultsFile, 'utf8').catch(() => '');
  for (const m of text.matchAll(/<!-- bench:(\S+) -->\n([\s\S]*?)<!-- \/bench:\1 -->/g)) sections.set(m[1], m[2]);
  return sections;
}

const fresh = new Map();
let failed = 0;
for (const file of selected) {
  if (stopping) break;
  process.stdout.write(`running ${file}...\n`);
  try {
    const mod = await import(pathToFileURL(join(here, file)).href);
    if (typeof mod.default !== 'function') throw new Error(`${file} has no default export function run(lib)`);
    const load = loadavg()[0].toFixed(2);
    const summary = { ...summarize(await mod.default(lib), file), load, loadAfter: '' };
    summary.loadAfter = loadavg()[0].toFixed(2);
    printTable(summary);
    fresh.set(file, markdown(summary));
  } catch (err) {
    failed++;
    process.stderr.write(`\n${file} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  }
}

// Read the file again only now: another run may have rewritten other sections meanwhile.
const sections = await readSections();
for (const [file, section] of fresh) sections.set(file, section);
const body = [...sections.keys()]
  .filter((file) => available.includes(file))
  .sort()
  .map((file) => `${START(file)}\n${sections.get(file).trimEnd()}\n${END(file)}\n`)
  .join('\n');
await writeFile(
  resultsFile,
  `# Benchmark results\n\nWritten by \`npm run bench\` (\`node bench/run.mjs [name...]\` after \`npm run build\`). ` +
    'Each figure is whole-process wall time of a built executable under the environment a Nomad agent gives it; ' +
    "ratios compare a row's median with the baseline row's median measured in the same run.\n\n" +
    body,
);
process.stdout.write(`\nwrote ${resultsFile}\n`);
process.exit(failed > 0 ? 1 : 0);
