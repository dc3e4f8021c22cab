import { forgetDiskRecordsOfGoneTempDirs } from './plugin-disk-records.js';

/** Vitest global setup: after the run, the reference plugins' records of test volumes dirs that are gone. */
export async function teardown(): Promise<void> {
  await forgetDiskRecordsOfGoneTempDirs();
}
