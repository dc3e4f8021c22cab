import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll } from 'vitest';

/**
 * With DHV_TEST_CPU=<file>, appends each test file's processor time to <file> as one JSON
 * line: the test process's own and that of every process it started and waited for (each
 * file runs in a process of its own, so this is the file's cost on a loaded machine, which
 * its wall time is not). `node bench/test-times.mjs` reads it.
 */
const out = process.env.DHV_TEST_CPU;
if (out) {
  afterAll((suite) => {
    // /proc/self/stat: fields 14-17 are utime, stime, cutime, cstime in clock ticks (100 per s).
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    const ticks = (i: number) => Number(fields[i - 3]);
    const file = suite.file.filepath;
    appendFileSync(
      out,
      JSON.stringify({ file, self: (ticks(14) + ticks(15)) / 100, children: (ticks(16) + ticks(17)) / 100 }) + '\n',
    );
  });
}
