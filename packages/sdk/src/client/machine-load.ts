import { availableParallelism, loadavg } from 'node:os';

/**
 * A deadline missed on a busy machine says little about the plugin: every process starts
 * slower there. When the last minute's load average is above the CPU count, the line that
 * says so; otherwise nothing.
 */
export function loadedMachineHint(): string[] {
  const [lastMinute = 0] = loadavg();
  const cpus = availableParallelism();
  if (lastMinute <= cpus) return [];
  return [
    `this machine is loaded (load average ${lastMinute.toFixed(1)} on ${cpus} CPUs), which slows every plugin's start; ` +
      'try again when it is quieter before blaming the plugin, and keep in mind that a real agent on a busy node misses the same deadline',
  ];
}

/** Discovery starts every fingerprint at once; past a few per CPU, that alone can miss the 1 s. */
export function manyStartedAtOnceHint(startedAtOnce: number): string {
  return (
    `${startedAtOnce} fingerprints started at once on ${availableParallelism()} CPUs: the machine was loaded, which slows every plugin's start ` +
    '(a real agent starts them all at once too, each with 1 s); make the plugin start faster, or keep fewer plugins in the plugin dir'
  );
}
