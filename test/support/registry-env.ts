/**
 * scripts/run-tests.mjs sets NODE_EXTRA_CA_CERTS aside in this variable for the whole run: Node
 * reads that file at every start, before any code runs (36 ms of processor time per process for
 * the system bundle here, and the suite starts thousands of `dhv` and node processes, none of
 * which opens a TLS connection). What reaches the npm registry gets it back from here.
 */
const SET_ASIDE = 'DHV_TEST_NODE_EXTRA_CA_CERTS';

/** The CA file the user gave Node, for the environment of a child that reaches the npm registry (npm install). */
export function registryCa(): { NODE_EXTRA_CA_CERTS?: string } {
  const file = process.env[SET_ASIDE] ?? process.env.NODE_EXTRA_CA_CERTS;
  return file ? { NODE_EXTRA_CA_CERTS: file } : {};
}
