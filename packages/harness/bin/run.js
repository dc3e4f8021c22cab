#!/usr/bin/env node
import { start } from './start.js';

await start();
// Output still queued for a pipe (a reader slower than dhv) is written before the exit below,
// which would otherwise cut it off at the pipe's buffer.
await Promise.all(
  [process.stdout, process.stderr].map((stream) => new Promise((flushed) => stream.write('', flushed))),
);
// Ended here rather than by an empty event loop: a natural exit first puts back the default
// action of every signal, so a Ctrl-C in its last milliseconds would kill dhv by SIGINT
// after it had finished (or cleaned up), hiding its exit status. process.exit leaves dhv's
// handlers in place, and a signal that comes now changes nothing.
process.exit();
