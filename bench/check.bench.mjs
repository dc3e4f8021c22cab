// Wall time of the whole conformance suite, `dhv check` as a user runs it, against the
// reference plugin dhv-mkdir (packages/plugin-mkdir/dist/dhv-mkdir, from `npm run build`)
// and the bash fixture good-plugin, whose operations cost almost nothing, so the
// difference is what dhv-mkdir's own runs add. Each plugin's catalogue alone
// (--no-explore) beside plain `dhv check`, the explorer included: its default number of
// random sequences, of one fixed seed so that every run does the same work. Target for
// plain `dhv check` (issue 37): 15 s at rest.
import { fileURLToPath } from 'node:url';

const DHV = fileURLToPath(new URL('../packages/harness/bin/run.js', import.meta.url));
const MKDIR = fileURLToPath(new URL('../packages/plugin-mkdir/dist/dhv-mkdir', import.meta.url));
const BASH = fileURLToPath(new URL('../packages/harness/fixtures/good-plugin', import.meta.url));
const RUNS = 3;
const WARMUP = 1;
/** Plain `dhv check` but for its seed, printed in the report: the same sequences every run. */
const PLAIN = ['--seed', '1'];

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
        '`dhv check <plugin>` end to end (CLI start, every catalogue check with the default --repeat 5, cleanup), one run after another: ' +
        'with --no-explore, the catalogue alone; plain, the explorer included (its default number of random sequences, of seed 1, so ' +
        'that every run does the same work). The bash fixture good-plugin is the baseline: its operations take a few milliseconds, ' +
        "so the rest is what dhv-mkdir's own process runs add.",
      rows: [
        { label: 'dhv check good-plugin (bash) --no-explore', samplesMs: await suite(BASH), baseline: true },
        { label: 'dhv check good-plugin (bash)', samplesMs: await suite(BASH, PLAIN, 2, 0), target: '≤ 15 s' },
        { label: 'dhv check dhv-mkdir --no-explore', samplesMs: await suite(MKDIR), target: '< 10 s' },
        { label: 'dhv check dhv-mkdir', samplesMs: await suite(MKDIR, PLAIN, 2, 0), target: '≤ 15 s' },
      ],
    };
  } finally {
    await lib.removeScratch(dir);
  }
}
