/**
 * Plugin versions as hashicorp/go-version's NewVersion parses them: the agent stores
 * the normalized form as the node attribute plugins.host_volume.<id>.version.
 */
const VERSION_PATTERN =
  /^v?([0-9]+(\.[0-9]+)*?)(-([0-9]+[0-9A-Za-z\-~]*(\.[0-9A-Za-z\-~]+)*)|(-?([A-Za-z\-~]+[0-9A-Za-z\-~]*(\.[0-9A-Za-z\-~]+)*)))?(\+([0-9A-Za-z\-~]+(\.[0-9A-Za-z\-~]+)*))?$/;

const INT64_MAX = 2n ** 63n - 1n;

export interface GoVersion {
  segments: bigint[];
  prerelease: string;
  metadata: string;
  /** The form the agent reports: at least three segments, `-pre` and `+meta` kept. */
  normalized: string;
  /** The text it was parsed from. */
  original: string;
}

export type GoVersionResult = { ok: true; version: GoVersion } | { ok: false; error: string };

export function parseGoVersion(input: string): GoVersionResult {
  const m = VERSION_PATTERN.exec(input);
  if (!m) return { ok: false, error: `malformed version: ${input}` };
  const segments: bigint[] = [];
  for (const part of m[1]!.split('.')) {
    const n = BigInt(part);
    if (n > INT64_MAX) return { ok: false, error: `Error parsing version: value out of range: ${part}` };
    segments.push(n);
  }
  while (segments.length < 3) segments.push(0n);
  const prerelease = m[7] || m[4] || '';
  const metadata = m[10] || '';
  let normalized = segments.join('.');
  if (prerelease) normalized += `-${prerelease}`;
  if (metadata) normalized += `+${metadata}`;
  return { ok: true, version: { segments, prerelease, metadata, normalized, original: input } };
}

export function isGoVersion(input: string): boolean {
  return VERSION_PATTERN.test(input) && parseGoVersion(input).ok;
}
