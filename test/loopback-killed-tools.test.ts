import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile, realpath, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildEnvironment } from '@dhv/sdk/client';
import { findTool } from '@dhv/sdk/plugin';
import { entriesAtOrBelow, readMountTable, shellQuote, signalProcess, signalProcessGroup } from '@dhv/sdk/host';
import {
  builtPlugin,
  loopDevicesBackedBelowSync,
  removeTempDir,
  skipRootTests,
  tempDir,
  toolPath,
} from './support/kit.js';
import { inPrivateMountNamespace } from './support/private-mount-namespace.js';
import { pidWrittenTo } from './support/processes.js';
import { inventory, MIB, tempVolumesDir } from './support/loopback-volumes.js';

/**
 * A create stopped (SIGTERM, or the deadline) while a host tool runs kills that tool, and
 * the tool may have done its work already: `losetup --find` attached the image, `mount`
 * mounted it. The create's undo must take that away too. In a private mount namespace the
 * plugin's tool is a wrapper that runs the real one and then waits to be killed, so the
 * kill always comes after the work; the namespace is judged before it goes (its mounts go
 * with it).
 */
describe.skipIf(skipRootTests('dhv-loopback killed host tools'))(
  'dhv-loopback stopped while a host tool that already did its work runs',
  () => {
    let volumesDir: string;
    let work: string;
    let group: number | undefined;

    beforeEach(async () => {
      volumesDir = await tempVolumesDir();
      // Not under /tmp: the wrapper runs from here, and /tmp may be noexec.
      work = await tempDir('killed-tool', '/var/tmp');
      group = undefined;
    });
    afterEach(async () => {
      // The namespace's shell, the plugin and the wrapper: one process group, started here.
      for (const deadline = Date.now() + 10_000; group !== undefined && Date.now() < deadline;) {
        if (!signalProcessGroup(group, 'SIGKILL')) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await removeTempDir(volumesDir);
      await removeTempDir(work);
    });

    /**
     * The wrapper bound over the tool the plugin finds: the call whose first argument is
     * `stallOn` runs the real tool, leaves `done` and then sleeps until it is killed; every
     * other call (the undo's `losetup --detach`, say) is the real tool.
     */
    const wrapper = (real: string, stallOn: string, done: string) =>
      [
        '#!/bin/sh',
        `[ "$1" = ${shellQuote(stallOn)} ] && [ ! -e ${shellQuote(done)} ] || exec ${shellQuote(real)} "$@"`,
        `${shellQuote(real)} "$@"`,
        `: > ${shellQuote(done)}`,
        `exec ${shellQuote(toolPath('sleep')!)} 600`,
        '',
      ].join('\n');

    /** Waits for `file` to hold a whole line (or, `empty`, to exist) while the namespace's shell lives. */
    const waitFor = async (file: string, what: string, gone: () => boolean, empty = false): Promise<string> => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const text = await readFile(file, 'utf8').catch(() => undefined);
        if (text !== undefined && (empty || text.endsWith('\n'))) return text.trim();
        if (gone() || Date.now() > deadline) throw new Error(`${what} never happened (${file} is not written)`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };

    const cases = [
      { tool: 'losetup', stallOn: '--find', made: 'attached the image to a loop device' },
      { tool: 'mount', stallOn: '-t', made: 'mounted the volume' },
    ] as const;
    for (const { tool, stallOn, made } of cases) {
      it(`undoes what a killed ${tool} did (it ${made} before SIGTERM stopped the create)`, async () => {
        const plugin = builtPlugin('dhv-loopback');
        const found = findTool(tool);
        const [real, fake, done] = [`${work}/real-${tool}`, `${work}/${tool}`, `${work}/${tool}.done`];
        await writeFile(real, '');
        await writeFile(fake, wrapper(real, stallOn, done), { mode: 0o755 });
        const q = shellQuote;
        const bind = `${q(toolPath('mount')!)} --bind`;
        const script = [
          'set -e',
          `${bind} ${q(found)} ${q(real)}`,
          `${bind} ${q(fake)} ${q(found)}`,
          'set +e',
          '"$0" create </dev/null &',
          `echo $! > ${q(`${work}/plugin.pid`)}`,
          'wait $!',
          `echo $? > ${q(`${work}/plugin.status`)}`,
          // Held until the test has judged the namespace: its mounts go with its last process.
          'read -r _ || true',
        ].join('\n');
        const request = {
          volumesDir,
          volumeId: randomUUID(),
          volumeName: 'v',
          nodeId: 'node-1',
          capacityMinBytes: 64n * MIB,
        };
        const child = spawn(...inPrivateMountNamespace(script, [plugin]), {
          env: buildEnvironment('create', request, plugin),
          stdio: ['pipe', 'pipe', 'pipe'],
          detached: true,
        });
        group = child.pid;
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        let closed = false;
        const exited = new Promise<void>((resolve) =>
          child.once('close', () => {
            closed = true;
            resolve();
          }),
        );

        const why = () => `\nstderr of the namespace and the plugin:\n${stderr}`;
        await waitFor(done, `the wrapped ${tool} finishing its work`, () => closed, true).catch((err: Error) => {
          throw new Error(err.message + why());
        });
        signalProcess(await pidWrittenTo(`${work}/plugin.pid`), 'SIGTERM');
        const exitStatus = await waitFor(`${work}/plugin.status`, 'the plugin exiting', () => closed);

        const volumes = await realpath(volumesDir);
        const left = {
          exitStatus,
          mountsInNamespace: entriesAtOrBelow(await readMountTable(`/proc/${child.pid}/mountinfo`), volumes).map(
            (m) => `${m.mountPoint} (${m.source})`,
          ),
          loopDevices: loopDevicesBackedBelowSync(volumesDir).map(
            (l) => `${l.device} (${l.backingFile}${l.deleted ? ', deleted' : ''})`,
          ),
          files: (await inventory(volumesDir)).files,
        };
        child.stdin.end();
        await exited;
        expect({ ...left, answer: stdout }, why()).toEqual({
          exitStatus: '1',
          mountsInNamespace: [],
          loopDevices: [],
          files: [],
          answer: expect.stringMatching(/"error":"create stopped \(received SIGTERM\) and undid what it had made/),
        });
      }, 120_000);
    }
  },
);
