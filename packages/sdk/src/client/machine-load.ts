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
