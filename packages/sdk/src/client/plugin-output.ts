import type { ChildProcess, StdioOptions } from 'node:child_process';
import { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import {
  findOutputHolders,
  outputEndsOf,
  parentEndsOf,
  peerSocketsOf,
  type OutputEnd,
  type OutputHolder,
} from './output-holders.js';
import { closePipeEnd, preparePipes, takePipes, type PipeEnds } from './pipes.js';

/**
 * A plugin's stdout and stderr: a pair of anonymous pipes as under a real agent, or, where
 * none can be made here, Node's own sockets. `undefined` stands for the sockets.
 */
export type OutputPipes = [PipeEnds, PipeEnds] | undefined;

/** Two fresh pipes, or `undefined` where anonymous pipes cannot be made (the run falls back to sockets). */
export async function openOutputPipes(): Promise<OutputPipes> {
  try {
    const [out, err] = await takePipes(2);
    return [out!, err!];
  } catch {
    return undefined; // no anonymous pipes here: fall back to Node's sockets
  }
}

/** Starts making a run's two pipes now, for a run about to start (preparePipes). */
export function prepareOutputPipes(): void {
  preparePipes(2);
}

/** Closes our copies of the pipes' ends: `read`, `write`, or both. */
export function closeOutputPipes(pipes: OutputPipes, which: 'read' | 'write' | 'both'): void {
  for (const p of pipes ?? []) {
    if (which !== 'write') closePipeEnd(p.read);
    if (which !== 'read') closePipeEnd(p.write);
  }
}

/** The child's stdio: stdin /dev/null, stdout and stderr the pipes' write ends (or sockets). */
export function childStdio(pipes: OutputPipes): StdioOptions {
  return ['ignore', pipes ? pipes[0].write : 'pipe', pipes ? pipes[1].write : 'pipe'];
}

/** The started plugin's output as this process reads it, and how to find who holds it. */
export interface PluginOutput {
  /** stdout, stderr. */
  streams: [Readable, Readable];
  /** Whoever holds the output now, whatever group it moved to. */
  holders: () => OutputHolder[];
  stdio: 'pipe' | 'socket';
}

export function pluginOutputOf(pipes: OutputPipes, child: ChildProcess): PluginOutput {
  const streams: [Readable, Readable] = pipes
    ? [
        new Socket({ fd: pipes[0].read, readable: true, writable: false }),
        new Socket({ fd: pipes[1].read, readable: true, writable: false }),
      ]
    : [child.stdout!, child.stderr!];
  // The pipes' identities, to find whoever holds them after the plugin exits, whatever group it moved to.
  const ends: OutputEnd[] = pipes
    ? [
        { id: pipes[0].id, of: 'stdout' },
        { id: pipes[1].id, of: 'stderr' },
      ]
    : [...(child.pid !== undefined ? outputEndsOf(child.pid) : []), ...parentEndsOf(streams)];
  return {
    streams,
    holders: () => findOutputHolders(pipes ? ends : [...ends, ...peerSocketsOf(ends)]),
    stdio: pipes ? 'pipe' : 'socket',
  };
}

/** Keeps a plugin's output up to a cap, and says whether more came. */
export class CappedBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly cap: number) {}

  /** Keeps what fits under the cap; returns false once the cap was passed. */
  push(chunk: Buffer): boolean {
    if (this.size >= this.cap) {
      this.truncated = true;
      return false;
    }
    const room = this.cap - this.size;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(kept);
    this.size += kept.length;
    if (chunk.length > room) this.truncated = true;
    return !this.truncated;
  }

  contents(): Buffer {
    return Buffer.concat(this.chunks);
  }
}
