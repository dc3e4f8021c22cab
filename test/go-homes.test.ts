import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Go's rules each have one home (docs/architecture.md), and so does what the agent sends a
// plugin: a second definition of one of them in any package's code fails here, naming both files.
const repo = fileURLToPath(new URL('..', import.meta.url));

interface OneHome {
  rule: string;
  home: string;
  /** A line of code (comments are not read) that only a definition of the rule writes. */
  marker: RegExp;
}

const HOMES: readonly OneHome[] = [
  {
    rule: "Go's strconv.Quote",
    home: 'packages/sdk/src/go/strconv.ts',
    marker: /\bfunction\s+goQuote\b|\bgoQuote\s*=/,
  },
  {
    rule: "Go's errno texts",
    home: 'packages/sdk/src/go/errno.ts',
    marker:
      /\bE[A-Z0-9]+\s*:\s*['"`][a-z]|['"`](no such file or directory|permission denied|exec format error|operation not permitted|file exists|text file busy)['"`]/,
  },
  {
    rule: "Go's strconv parsers (ParseUint, Atoi, ParseInt, ParseFloat, ParseBool)",
    home: 'packages/sdk/src/go/strconv-parsers.ts',
    marker: /\bfunction\s+go(ParseUint|Atoi|ParseInt|ParseFloat|ParseBool)\b|['"`]strconv\.(ParseUint|Atoi|ParseInt)\b/,
  },
  {
    rule: "Go's os.FileMode to a Unix mode (setuid/setgid/sticky from Go's bits)",
    home: 'packages/sdk/src/go/file-mode.ts',
    marker: /\bfunction\s+goSyscallMode\b|\b1\s*<<\s*2[23]\b/,
  },
  {
    rule: "Nomad's built-in mkdir's reading of mode, uid and gid",
    home: 'packages/sdk/src/helpers/ownership.ts',
    marker: /\bfunction\s+readMkdirParameter\b|\bgoParseUint\([^,]+,\s*8\s*,\s*32\s*\)/,
  },
  {
    rule: "go-multierror's `N errors occurred:`",
    home: 'packages/harness/src/go/multierror.ts',
    marker: /occurred:/,
  },
  {
    rule: "the agent's cleanup delete (no name, no namespace) and a delete made from a create (no capacities)",
    home: 'packages/sdk/src/client/agent-requests.ts',
    marker: /\bnamespace:\s*''|\bcapacityMinBytes:\s*_/,
  },
];

async function packageSources(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const pkg of await readdir(join(repo, 'packages'))) {
    const src = join(repo, 'packages', pkg, 'src');
    const entries = await readdir(src, { recursive: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.endsWith('.ts') || entry.endsWith('.test.ts') || entry.includes('__fixtures__')) continue;
      const path = join(src, entry);
      files.set(relative(repo, path), await readFile(path, 'utf8'));
    }
  }
  return files;
}

/** The files whose code (comment lines left out) has a line that `marker` matches. */
function filesDefining(marker: RegExp, sources: ReadonlyMap<string, string>): string[] {
  const code = (text: string) => text.split('\n').filter((line) => !/^\s*(\/\/|\/\*|\*)/.test(line));
  return [...sources].filter(([, text]) => code(text).some((line) => marker.test(line))).map(([path]) => path);
}

describe("Go's rules, one home each", () => {
  it.each(HOMES)('$rule is defined in $home and nowhere else', async ({ home, marker }) => {
    expect(filesDefining(marker, await packageSources())).toEqual([home]);
  });

  it.each([
    ['export function goQuote(s: string): string {', 'packages/harness/src/agent/quote.ts'],
    ["const TEXT = { EEXIST: 'file exists' };", 'packages/harness/src/agent/fs-errors.ts'],
    ['return `${n} ${n === 1 ? "error" : "errors"} occurred:\\n`;', 'packages/harness/src/jobs/join.ts'],
    ['const mode = goParseUint(value, 8, 32);', 'packages/harness/src/agent/builtin-mkdir.ts'],
    ['const GO_MODE_SETGID = 1 << 22;', 'packages/plugin-mkdir/src/mode.ts'],
    ['export function goAtoi(s: string): GoParsed<bigint> {', 'packages/harness/src/go/strconv.ts'],
    [
      "await ctx.delete({ ...request, volumeName: '', namespace: '' });",
      'packages/harness/src/conformance/explore/lab.ts',
    ],
  ])('catch a planted second definition: %s', async (planted, where) => {
    const sources = await packageSources();
    sources.set(where, `// a comment\n${planted}\n`);
    const caught = HOMES.filter(({ marker }) => filesDefining(marker, sources).includes(where));
    expect(caught).toHaveLength(1);
  });
});
