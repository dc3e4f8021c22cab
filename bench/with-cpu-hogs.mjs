// Runs a command with CPU hogs beside it: one busy process per core, or DHV_CPU_HOGS of
// them, at the command's own priority, stopped when it ends however it ends. What a verdict
// must survive "under load as at rest" (issue 37) is judged this way:
//   node bench/with-cpu-hogs.mjs npx vitest run test/check-explore.test.ts
// It prints the load average before and after, the command's wall time, and exits with the
// command's exit code.
import { spawn } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';

const command = process.argv.slice(2);
if (command.length === 0) {
  process.stderr.write('usage: [DHV_CPU_HOGS=N] node bench/with-cpu-hogs.mjs <command> [args...]\n');
  process.exit(2);
}
const count = Number(process.env.DHV_CPU_HOGS ?? availableParallelism());
if (!Number.isInteger(count) || count < 0) {
  process.stderr.write(`DHV_CPU_HOGS must be a whole number, not ${process.env.DHV_CPU_HOGS}\n`);
  process.exit(2);
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const hogs = Array.from({ length: count }, () =>
  spawn(process.execPath, ['-e', 'for (;;);'], { stdio: 'ignore', detached: false }),
);
const stopHogs = () => {
  for (const hog of hogs) hog.kill('SIGKILL');
};
process.on('exit', stopHogs);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'])
  process.once(signal, () => {
    stopHogs();
    process.exit(130);
  });

process.stdout.write(`with ${count} CPU hogs beside it (load average ${load()}): ${command.join(' ')}\n`);
const started = performance.now();
const child = spawn(command[0], command.slice(1), { stdio: 'inherit' });
const code = await new Promise((resolve) => {
  child.on('error', (err) => {
    process.stderr.write(`${err.message}\n`);
    resolve(127);
  });
  child.on('close', (exit, signal) => resolve(exit ?? (signal ? 128 : 1)));
});
process.stdout.write(
  `\nexit ${code} after ${((performance.now() - started) / 1000).toFixed(1)} s with ${count} CPU hogs (load average ${load()})\n`,
);
stopHogs();
process.exit(code);
