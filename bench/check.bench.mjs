// Wall time of the whole conformance suite, `dhv check` as a user runs it, against the
// reference plugin dhv-mkdir (packages/plugin-mkdir/dist/dhv-mkdir, from `npm run build`).
// Baseline: the same suite against the bash fixture good-plugin, whose operations cost
// almost nothing, so the difference is what dhv-mkdir's own runs add. Target: under 10 s
// for the catalogue (--no-explore); plain `dhv check`, which also explores random
// sequences for its default budget of about 30 s, under 60 s.
import { fileURLToPath } from 'node:url';

const DHV = fileURLToPath(new URL('../packages/harness/bin/run.js', import.meta.url));
const MKDIR = fileURLToPath(new URL('../packages/plugin-mkdir/dist/dhv-mkdir', import.meta.url));
const BASH = fileURLToPath(new URL('../packages/harness/fixtures/good-plugin', import.meta.url));
const RUNS = 3;
const WARMUP = 1;

export default async function run(lib) {
  const dir = await lib.makeScratch('check');
  try {
    const suite = (plugin, flags = ['--no-explore'], runs = RUNS, warmup = WARMUP) =>
      lib.timeProcess(process.execPath, [DHV, 'check', plugin, '--volumes-dir', dir, ...flags], {
        env: { ...process.env },
        runs,
        warmup,
      });
    return {
      title: 'dhv check: the whole conformance suite',
      note:
        '`dhv check <plugin> --no-explore` end to end (CLI start, every catalogue check with the default --repeat 5, cleanup), one run after another; ' +
        'the last row is plain `dhv check`, the explorer included (its default 30 s budget, once: it takes that long by design). ' +
        'The bash fixture good-plugin is the baseline: its operations take a few milliseconds, so the rest is what ' +
        "dhv-mkdir's own process runs add (about a hundred of them).",
      rows: [
        { label: 'dhv check good-plugin (bash)', samplesMs: await suite(BASH), baseline: true },
        { label: 'dhv check dhv-mkdir --no-explore', samplesMs: await suite(MKDIR), target: '< 10 s' },
        { label: 'dhv check dhv-mkdir (with the explorer)', samplesMs: await suite(MKDIR, [], 1, 0), target: '< 60 s' },
      ],
    };
  } finally {
    await lib.removeScratch(dir);
  }
}
