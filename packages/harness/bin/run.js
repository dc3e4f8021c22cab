#!/bin/sh
':' //; if [ -n "${NODE_EXTRA_CA_CERTS+x}" ]; then export DHV_NODE_EXTRA_CA_CERTS="$NODE_EXTRA_CA_CERTS"; unset NODE_EXTRA_CA_CERTS; fi; exec node "$0" "$@"
// Run as a program, this file is first a shell script (the line above) that starts node on
// itself as `#!/usr/bin/env node` would, but without NODE_EXTRA_CA_CERTS, which node reads
// and parses at every start (40 ms of a 60 ms start where a system CA bundle is named) and
// dhv never needs: it opens no TLS connection. start.js gives it back to what dhv runs.
// CommonJS (bin/package.json), as all of dhv's start before a bundle is: Node runs a
// CommonJS main module without setting up its ES module loader.
const { start } = require('./start.js');

start()
  // Output still queued for a pipe (a reader slower than dhv) is written before the exit below,
  // which would otherwise cut it off at the pipe's buffer.
  .then(() =>
    Promise.all([process.stdout, process.stderr].map((stream) => new Promise((flushed) => stream.write('', flushed)))),
  )
  // Ended by process.exit rather than by an empty event loop: a natural exit first puts back
  // the default action of every signal, so a Ctrl-C in its last milliseconds would kill dhv by
  // SIGINT after it had finished (or cleaned up), hiding its exit status. process.exit leaves
  // dhv's handlers in place, and a signal that comes now changes nothing. A failed start is
  // left unhandled: Node prints it and exits 1.
  .then(() => process.exit());
