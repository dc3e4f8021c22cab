import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// `npm test` builds first: these checks run the built file, exactly as a Nomad agent would.
const plugin = fileURLToPath(new URL('../dist/{{pluginId}}', import.meta.url));
const dhv = join(dirname(createRequire(import.meta.url).resolve('@dhv/harness/package.json')), 'bin', 'run.js');
const needsRoot = {{needsRoot}};

function check(): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [dhv, 'check', plugin, '--json'], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const exitCode = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ exitCode, stdout, stderr });
    });
  });
}

describe.skipIf(needsRoot && process.getuid?.() !== 0)('{{pluginId}} conformance', () => {
  it('passes every required check of dhv check', async () => {
    const { exitCode, stdout, stderr } = await check();
    expect(exitCode, `dhv check found a problem:\n${stdout}\n${stderr}`).toBe(0);
  }, 120_000);
});
