import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, realpath, stat, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildEnvironment, type RequestInput } from '@dhv/sdk/client';
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
import { inventory, MIB, tempVolumesDir } from './support/loopback-volumes.js';

/**
 * A create stopped (SIGTERM, or the deadline) while a host tool runs kills that tool, and
 * the tool may have done its work already: `losetup --find` attached the image, `mount`
 * mounted it, `resize2fs` grew the filesystem. What the create then undoes must account
 * for that work. The plugin runs in a private mount namespace where its tool is a wrapper
 * that runs the real one and then waits to be killed, so the kill always comes after the
 * work; the namespace is judged before it goes (its mounts go with it).
 */
describe.skipIf(skipRootTests('dhv-loopback killed host tools'))(
  'dhv-loopback stopped while a host tool that already did its work runs',
  () => {
    let volumesDir: string;
    let work: string;
    /** Process groups started here: the namespace's holder, each plugin run. */
    let groups: number[];

    beforeEach(async () => {
      volumesDir = await tempVolumesDir();
      // Not under /tmp: the wrapper runs from here, and /tmp may be noexec.
      work = await tempDir('killed-tool', '/var/tmp');
      groups = [];
    });
    afterEach(async () => {
      for (const group of groups) {
        for (let tries = 0; tries < 200 && signalProcessGroup(group, 'SIGKILL'); tries++)
          await new Promise((r) => setTimeout(r, 50));
      }
      await removeTempDir(volumesDir);
      await removeTempDir(work);
    });

    const request = (volumeId: string, capacityMinBytes = 64n * MIB): RequestInput<'create'> => ({
      volumesDir,
      volumeId,
      volumeName: 'v',
      nodeId: 'node-1',
      capacityMinBytes,
    });

    /**
     * The wrapper bound over the tool the plugin finds: the first call that succeeds leaves
     * `done` once the real tool returned, and then sleeps until it is killed; a call before
     * it that fails (ext4's online resize, where the kernel refuses it) and every call after
     * it (the undo's `losetup --detach`, say) are the real tool's.
     */
    const stalling = (real: string, done: string) =>
      [
        '#!/bin/sh',
        `[ ! -e ${shellQuote(done)} ] || exec ${shellQuote(real)} "$@"`,
        `${shellQuote(real)} "$@" || exit`,
        `: > ${shellQuote(done)}`,
        `exec ${shellQuote(toolPath('sleep')!)} 600`,
        '',
      ].join('\n');
    /** A wrapper that fails the first call, as a kernel that refuses ext4's online resize does; the rest are the real tool's. */
    const refusing = (real: string, refused: string) =>
      [
        '#!/bin/sh',
        `[ -e ${shellQuote(refused)} ] && exec ${shellQuote(real)} "$@"`,
        `: > ${shellQuote(refused)}`,
        "echo 'refused by the test' >&2",
        'exit 1',
        '',
      ].join('\n');

    /** Waits for `file` to exist while `alive` holds. */
    const waitFor = async (file: string, what: string, alive: () => boolean) => {
      for (const deadline = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 20))) {
        if (existsSync(file)) return;
        if (!alive() || Date.now() > deadline) throw new Error(`${what} never happened (${file} is missing)`);
      }
    };

    interface Run {
      child: ChildProcess;
      exited: Promise<{ status: number | null; stdout: string; stderr: string }>;
      running: () => boolean;
    }
    /** `argv` started in a process group of its own, its output kept. */
    const start = ([file, args]: [string, string[]], env: Record<string, string>): Run => {
      const child = spawn(file, args, { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
      groups.push(child.pid!);
      let [stdout, stderr, running] = ['', '', true];
      child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) =>
        child.once('close', (status) => {
          running = false;
          resolve({ status, stdout, stderr });
        }),
      );
      return { child, exited, running: () => running };
    };

    /**
     * A private mount namespace, held until `release`, in which `stalled` is the stalling
     * wrapper (and `refused`, when named, the refusing one); `create` runs the built plugin's
     * create in it, `root` reaches a path as the namespace sees it, and `mounts` is what it
     * has mounted under the volumes dir.
     */
    async function namespaceWithWrapped(stalled: string, refused?: string) {
      const q = shellQuote;
      const bind = `${q(toolPath('mount')!)} --bind`;
      const binds: string[] = [];
      const wrappers: [string, (real: string, marker: string) => string][] = [[stalled, stalling]];
      if (refused) wrappers.push([refused, refusing]);
      for (const [tool, wrapper] of wrappers) {
        const [real, fake, found] = [`${work}/real-${tool}`, `${work}/${tool}`, findTool(tool)];
        await writeFile(real, '');
        await writeFile(fake, wrapper(real, `${work}/${tool}.done`), { mode: 0o755 });
        binds.push(`${bind} ${q(found)} ${q(real)}`, `${bind} ${q(fake)} ${q(found)}`);
      }
      const ready = `${work}/ready`;
      const script = [
        'set -e',
        ...binds,
        `: > ${q(ready)}`,
        // Held until the test has judged the namespace: its mounts go with its last process.
        'read -r _ || true',
      ].join('\n');
      const holder = start(inPrivateMountNamespace(script), {});
      await waitFor(ready, 'the namespace set-up', holder.running);
      const pid = holder.child.pid!;
      const plugin = builtPlugin('dhv-loopback');
      return {
        create: (asked: RequestInput<'create'>) =>
          start(
            [toolPath('nsenter')!, [`--target=${pid}`, '--mount', '--', plugin, 'create']],
            buildEnvironment('create', asked, plugin),
          ),
        done: `${work}/${stalled}.done`,
        root: (path: string) => `/proc/${pid}/root${path}`,
        mounts: async () =>
          entriesAtOrBelow(await readMountTable(`/proc/${pid}/mountinfo`), await realpath(volumesDir)).map(
            (m) => `${m.mountPoint} (${m.source})`,
          ),
        release: async () => {
          holder.child.stdin!.end();
          await holder.exited;
        },
      };
    }

    /** The create stopped by SIGTERM once the wrapped tool did its work: its exit status and answer. */
    async function stoppedAfterWork(
      ns: Awaited<ReturnType<typeof namespaceWithWrapped>>,
      asked: RequestInput<'create'>,
    ) {
      const run = ns.create(asked);
      await waitFor(ns.done, 'the wrapped tool finishing its work', run.running).catch(async (err: Error) => {
        throw new Error(`${err.message}\n${(await run.exited).stderr}`);
      });
      signalProcess(run.child.pid!, 'SIGTERM');
      const { status, stdout, stderr } = await run.exited;
      return { status, answer: stdout, stderr };
    }

    const STOPPED = /^\{"error":"create stopped \(received SIGTERM\) and undid what it had made/;

    const cases = [
      { tool: 'losetup', made: 'attached the image to a loop device' },
      { tool: 'mount', made: 'mounted the volume' },
    ] as const;
    for (const { tool, made } of cases) {
      it(`undoes what a killed ${tool} did (it ${made} before SIGTERM stopped the create)`, async () => {
        const ns = await namespaceWithWrapped(tool);
        const { stderr, ...run } = await stoppedAfterWork(ns, request(randomUUID()));
        const left = {
          ...run,
          mountsInNamespace: await ns.mounts(),
          loopDevices: loopDevicesBackedBelowSync(volumesDir).map(
            (l) => `${l.device} (${l.backingFile}${l.deleted ? ', deleted' : ''})`,
          ),
          files: (await inventory(volumesDir)).files,
        };
        await ns.release();
        expect(left, stderr).toEqual({
          status: 1,
          answer: expect.stringMatching(STOPPED),
          mountsInNamespace: [],
          loopDevices: [],
          files: [],
        });
      }, 120_000);
    }

    it('keeps the image grown when a killed resize2fs had grown the filesystem, and the next create finishes', async () => {
      const id = randomUUID();
      const ns = await namespaceWithWrapped('resize2fs');
      const made = await ns.create(request(id)).exited;
      expect(made.status, made.stderr).toBe(0);
      const path = join(volumesDir, id);
      await writeFile(ns.root(`${path}/keep`), 'kept');

      const { stderr, ...run } = await stoppedAfterWork(ns, request(id, 128n * MIB));
      const fs = await statfs(ns.root(path), { bigint: true });
      const image = await stat(join(volumesDir, '.dhv-loopback', `${id}.img`), { bigint: true });
      expect({ ...run, filesystemFitsImage: fs.blocks * fs.bsize <= image.size }, stderr).toEqual({
        status: 1,
        answer: expect.stringMatching(STOPPED),
        filesystemFitsImage: true,
      });

      const again = await ns.create(request(id, 128n * MIB)).exited;
      const kept = await readFile(ns.root(`${path}/keep`), 'utf8');
      await ns.release();
      expect({ status: again.status, answer: again.stdout, kept }, again.stderr).toEqual({
        status: 0,
        answer: `{"path":${JSON.stringify(path)},"bytes":${128n * MIB}}\n`,
        kept: 'kept',
      });
    }, 120_000);

    it('mounts the volume again when a killed umount had unmounted it to grow ext4 offline', async () => {
      const id = randomUUID();
      const ns = await namespaceWithWrapped('umount', 'resize2fs');
      const made = await ns.create(request(id)).exited;
      expect(made.status, made.stderr).toBe(0);
      const path = join(volumesDir, id);
      await writeFile(ns.root(`${path}/keep`), 'kept');

      const { stderr, ...run } = await stoppedAfterWork(ns, request(id, 128n * MIB));
      const left = {
        ...run,
        mountsInNamespace: await ns.mounts(),
        kept: await readFile(ns.root(`${path}/keep`), 'utf8').catch(String),
      };
      await ns.release();
      expect(left, stderr).toEqual({
        status: 1,
        answer: expect.stringMatching(STOPPED),
        mountsInNamespace: [`${path} (${loopDevicesBackedBelowSync(volumesDir)[0]?.device})`],
        kept: 'kept',
      });
    }, 120_000);
  },
);
