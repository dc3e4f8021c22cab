import type { ConformanceReport } from '../types.js';

/** The whole report as JSON (sizes are already strings, so nothing is lost). */
export function formatJson(report: ConformanceReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
