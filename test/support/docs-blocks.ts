import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import fs from 'fs-extra';
import { REPO_ROOT } from './checkout-paths.js';
import { registryCa } from './registry-env.js';
import { inPrivateMountNamespace } from './private-mount-namespace.js';

/**
 * The docs' shell examples as tests: every fenced `sh` block of README.md, docs/*.md and the
 * package READMEs, run as written with bash -euo pipefail, the blocks of one section
 * (heading) in one shell, the sections of a page in order, each starting in the folder the
 * one before it ended in. Markers just above a block:
 *
 *   <!-- run in: the checkout -->             start in the checkout's root
 *   <!-- run in: a checkout of its own -->    start in the root of a fresh copy of the checkout,
 *                                             beside the page's other sections (it needs nothing they made)
 *   <!-- run in: an empty folder, with F -->  start in a new folder outside the checkout, F copied into
 *                                             it from where the block before ended (another host)
 *   <!-- save as: NAME -->                    a ```ts block written to NAME there, for the blocks after it
 *   <!-- not run: why -->                     not run, and counted
 *
 * Most pages run in test/docs-examples.test.ts against a copy of the checkout; a page (or a
 * section) whose reader is elsewhere is run by the test that makes that setting (RUN_ELSEWHERE).
 *
 * A run is root in a private mount namespace where /opt, /srv and /tmp are empty folders of its
 * own, /opt/nomad/data/host_volume_plugins made, as on a Nomad client (and the reference plugins'
 * records in /var/lib/dhv-mkdir and /var/lib/dhv-loopback its own). `npm install -g`
 * installs into the run's own prefix, first on PATH. Stand-ins for what a Nomad client has:
 * `sudo` (this is root already), `nomad volume create SPEC`, `nomad node status` and `nomad volume
 * status` (dhv's, with the client's plugin dir: dhv is the client agent's simulation) and `systemctl reload nomad` (the
 * simulated agent finds plugins on every command: there is nothing to reload; docs-stand-ins.ts). What a block
 * assumes of the reader's own machine (a plugin at ./my-plugin) is in PREPARED, run just before it.
 */

export const DOC_PAGES = [
  'README.md',
  ...readdirSync(join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...readdirSync(join(REPO_ROOT, 'packages')).map((p) => `packages/${p}/README.md`),
];

export type StartIn = 'after-previous' | 'checkout' | 'own-checkout' | { emptyFolderWith: string };

export interface Block {
  page: string;
  line: number;
  section: string;
  text: string;
  notRun?: string;
  /** A ```ts block to write to this file name, not run. */
  saveAs?: string;
  startIn: StartIn;
}

export const NOT_RUN = /^<!-- not run: (.+) -->$/;
export const SAVE_AS = /^<!-- save as: (\S+) -->$/;
const RUN_IN = /^<!-- run in: (the checkout|a checkout of its own|an empty folder, with (\S+)) -->$/;

/**
 * Blocks whose reader is not in a checkout, or whose `dhv check` a test runs as written to judge its
 * reports and what it leaves: the test that makes their setting runs them.
 */
export const RUN_ELSEWHERE: ReadonlyArray<{ page: string; section?: string; by: string; where: string }> = [
  {
    page: 'README.md',
    section: '## Install',
    by: 'test/packaging-tarball.test.ts',
    where: 'the one-file install: packed in a copy of the checkout, installed with the registry unreachable',
  },
  {
    page: 'README.md',
    section: '### Running the tests',
    by: 'test/check-reference-plugins.test.ts',
    where: "with the harness README's dhv-mkdir checks, in one copy of the checkout, judged for their reports",
  },
  {
    page: 'packages/sdk/README.md',
    by: 'test/packaging-install.test.ts',
    where: 'a project that depends on the packed @dhv/sdk, outside the checkout; its dhv check judged for its report',
  },
  {
    page: 'packages/harness/README.md',
    section: '## Conformance checks (`dhv check`)',
    by: 'test/check-reference-plugins.test.ts',
    where:
      'dhv-mkdir in a copy of the checkout, dhv-loopback as root in the checkout; judged for their reports and leftovers',
  },
];

export const elsewhere = (b: Block) =>
  RUN_ELSEWHERE.find((e) => e.page === b.page && (e.section === undefined || e.section === b.section));

/** The runnable blocks `testFile` runs (RUN_ELSEWHERE), in page order. */
export function blocksRunBy(testFile: string): Block[] {
  return ALL_BLOCKS.filter((b) => b.notRun === undefined && elsewhere(b)?.by === testFile);
}

export function blocksOf(page: string): Block[] {
  const lines = readFileSync(join(REPO_ROOT, page), 'utf8').split('\n');
  const blocks: Block[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    if (/^#{1,6} /.test(lines[i]!)) section = lines[i]!;
    // A block may be indented (inside a list item): its lines lose that indent.
    const fence = /^( *)```(\w*)$/.exec(lines[i]!);
    if (!fence) continue;
    const indent = fence[1]!;
    const end = lines.indexOf(`${indent}\`\`\``, i + 1);
    let before = i - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    const marker = before >= 0 ? lines[before]!.trim() : '';
    const text = lines
      .slice(i + 1, end)
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
      .join('\n');
    const notRun = NOT_RUN.exec(marker)?.[1];
    const saveAs = SAVE_AS.exec(marker)?.[1];
    const runIn = RUN_IN.exec(marker);
    const startIn: StartIn = !runIn
      ? 'after-previous'
      : runIn[2]
        ? { emptyFolderWith: runIn[2] }
        : runIn[1] === 'the checkout'
          ? 'checkout'
          : 'own-checkout';
    if (fence[2] === 'sh' || saveAs)
      blocks.push({
        page,
        line: i + 1,
        section,
        text,
        ...(notRun ? { notRun } : {}),
        ...(saveAs ? { saveAs } : {}),
        startIn,
      });
    i = end;
  }
  return blocks;
}

export const ALL_BLOCKS = DOC_PAGES.flatMap(blocksOf);
export const keyOf = (b: Block) => `${b.page}: ${b.text.split('\n')[0]}`;
export const idOf = (b: Block) => `${b.page}:${b.line}`;

/** "A plugin at ./my-plugin": dhv-mkdir, through a launcher (beside the checkout's "type": "module" package.json node would load a copy of the bundle as ESM). */
const MY_PLUGIN =
  'printf \'#!/bin/sh\\nexec %s/packages/plugin-mkdir/dist/dhv-mkdir "$@"\\n\' "$PWD" > my-plugin && chmod +x my-plugin';

/** What a block takes for granted of the reader's machine, set up in its shell just before it (keyed `page: first line`). */
export const PREPARED: Record<string, string> = {
  'packages/harness/README.md: npx dhv plugin run packages/plugin-mkdir/dist/dhv-mkdir fingerprint': [
    '# "dhv-loopback in /opt/plugins" and "a plugin at ./my-plugin": the reference plugins',
    'mkdir -p /opt/plugins && cp packages/plugin-loopback/dist/dhv-loopback /opt/plugins/',
    MY_PLUGIN,
  ].join('\n'),
  // The checks of "a plugin at ./my-plugin": the bash fixture that passes every check (dhv-mkdir's own
  // whole check is the line above them; a second one of the same plugin was 24 CPU-s, this 8).
  'packages/harness/README.md: npm run build': 'cp packages/harness/fixtures/good-plugin my-plugin',
};

/**
 * The environment of a user's shell: none of vitest's or npm run's settings, nor the suite's
 * TMPDIR (scripts/suite-tmpdir.mjs: a run's /tmp is its own, and what goes there is judged); and, as a CI job
 * might set it, two explorer sequences for every `dhv check` an example runs: an example
 * proves its commands work, and the explorer's own verdicts are tested in check-explore.
 */
export const userEnv = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !/^(npm_|VITEST|NODE_OPTIONS$|NODE_ENV$|FORCE_COLOR$|DHV_|TMPDIR$)/i.test(key),
    ),
  ),
  ...registryCa(),
  DHV_CHECK_RUNS: '2',
} as Record<string, string>;

/** The checkout's files and built outputs, copied (npm pack skips a linked folder); its installed node_modules, linked. */
export async function copyCheckout(to: string): Promise<void> {
  const listed = await execa('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: REPO_ROOT,
  });
  const packages = readdirSync(join(REPO_ROOT, 'packages')).map((name) => `packages/${name}`);
  const files = [
    ...listed.stdout.split('\0').filter(Boolean),
    ...packages.flatMap((p) => [`${p}/dist`, `${p}/lib`, `${p}/oclif.manifest.json`]),
  ];
  // One cp for them all: about a second less processor time a copy than copying file by file from here.
  const present = files.filter((file) => existsSync(join(REPO_ROOT, file)));
  await fs.ensureDir(to);
  await execa('cp', ['-a', '--parents', '-t', to, '--', ...present], { cwd: REPO_ROOT });
  for (const path of ['node_modules', ...packages.map((p) => `${p}/node_modules`)]) {
    if (await fs.pathExists(join(REPO_ROOT, path))) await fs.ensureSymlink(join(REPO_ROOT, path), join(to, path));
  }
  // How the npm stand-in knows a copy's root.
  await fs.writeFile(join(to, '.docs-examples-checkout'), '');
}

const BEGIN = '@@docs-example-begin';
const END = '@@docs-example-end';
const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/** One section's blocks as one bash script: each announces itself before and after it runs. */
function sectionScript(blocks: readonly Block[], run: BlockRun, cwdFile: string): string {
  const lines = [`cd "$(cat ${quote(cwdFile)})"`];
  for (const block of blocks) {
    lines.push(`echo '${BEGIN} ${idOf(block)}'`);
    if (block.startIn === 'checkout' || block.startIn === 'own-checkout') lines.push(`cd ${quote(run.checkout)}`);
    else if (block.startIn !== 'after-previous') {
      const host = join(run.dir, 'host');
      lines.push(
        `mkdir ${quote(host)} && cp -- ${quote(block.startIn.emptyFolderWith)} ${quote(host)}/ && cd ${quote(host)}`,
      );
    }
    if (block.saveAs) {
      const eof = `DOCS_EXAMPLE_EOF_${block.line}`;
      lines.push(`cat > '${block.saveAs}' <<'${eof}'`, block.text, eof);
    } else {
      const prepared = PREPARED[keyOf(block)];
      if (prepared) lines.push(prepared);
      lines.push(block.text);
    }
    lines.push(`echo '${END} ${idOf(block)}'`);
  }
  lines.push(`pwd > ${quote(cwdFile)}`);
  return lines.join('\n');
}

/**
 * Runs `text` with bash -euo pipefail, as root in a mount namespace where /opt, /srv and /tmp are
 * the run's own, or (`namespace: false`, for blocks that write nowhere outside their folders and its TMPDIR) as it is.
 */
function runBash(text: string, root: string, env: Record<string, string>, namespace: boolean) {
  // stdin not a socket: bash reads /etc/bash.bashrc when it thinks sshd started it.
  const options = { env, extendEnv: false, reject: false, stdin: 'ignore', all: true } as const;
  if (!namespace) return execa('/bin/bash', ['-euo', 'pipefail', '-c', text], options);
  const [command, args] = inPrivateMountNamespace(
    [
      // A checkout under one of them (a clone in /tmp) stays where it is: the copies link its node_modules.
      'case "$3" in /opt/*|/srv/*|/tmp/*) /usr/bin/mkdir -p "$1/.source-checkout" && /usr/bin/mount --bind "$3" "$1/.source-checkout" || exit 1 ;; esac',
      'for d in opt srv tmp; do /usr/bin/mount --bind "$1/$d" "/$d" || exit 1; done',
      'case "$3" in /opt/*|/srv/*|/tmp/*) /usr/bin/mkdir -p "$3" && /usr/bin/mount --bind "$1/.source-checkout" "$3" || exit 1 ;; esac',
      // The reference plugins' records of which disk a volumes dir is on (/var/lib/<plugin>/volumes-dirs/),
      // the run's own too: the volumes dirs of this /tmp exist nowhere else, and another test's clean-up of
      // records of gone temp dirs (the global teardown, here a generated project's vitest) would take them.
      'for p in dhv-mkdir dhv-loopback; do',
      '  /usr/bin/mkdir -p "/var/lib/$p" "$1/var-lib/$p" && /usr/bin/mount --bind "$1/var-lib/$p" "/var/lib/$p" || exit 1',
      'done',
      'exec /bin/bash -euo pipefail -c "$2"',
    ].join('\n'),
    ['sh', root, text, realpathSync(REPO_ROOT)],
  );
  return execa(command, args, options);
}

/** Where one run of blocks happens: its own folder, root of /opt, /srv, /tmp, npm prefix, and the checkout it starts in. */
export interface BlockRun {
  dir: string;
  /** The folder the first block starts in, and `run in: the checkout` goes back to. */
  checkout: string;
  /** The stand-ins' folder (writeStandIns), on PATH after the run's npm prefix. */
  bin: string;
  /** False: run without a mount namespace of its own (default true: /opt, /srv, /tmp the run's own; needs root). */
  namespace?: boolean;
  /** A folder shared by runs of one test file: an `npx dhv check` that passed in one is not run again in another. */
  memo?: string;
}

export interface SectionResult {
  section: string;
  blocks: Block[];
  exitCode: number | undefined;
  output: string;
  /** The block that was running when the section stopped (the last one when it ran to its end). */
  failed: Block;
  ended: string[];
  seconds: number;
}

export const runPrefix = (run: BlockRun) => join(run.dir, 'prefix');
/** The run's own /tmp: bound over /tmp in its mount namespace, its TMPDIR without one. */
export const runTmp = (run: BlockRun) => join(run.dir, 'root', 'tmp');

/** The environment of a run: the user's, with the run's npm prefix and the stand-ins first on PATH. */
export function runEnv(run: BlockRun): Record<string, string> {
  return {
    ...userEnv,
    NO_COLOR: '1',
    PATH: `${join(runPrefix(run), 'bin')}:${run.bin}:${userEnv.PATH ?? ''}`,
    npm_config_prefix: runPrefix(run),
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    // The stand-ins' own: where the npm stand-in makes the empty cache of a global install.
    DOCS_EXAMPLES_RUN: run.dir,
    ...(run.namespace === false ? { TMPDIR: runTmp(run) } : {}),
    ...(run.memo ? { DOCS_EXAMPLES_MEMO: run.memo } : {}),
  };
}

/**
 * Runs `blocks` (one page's, or part of one) section by section in `run`, the first starting in
 * `run.checkout`; stops at the first section that fails. The caller removes `run.dir`
 * (after releaseEverythingBelow: a loopback example's volume may still be mounted there).
 */
export async function runSections(blocks: readonly Block[], run: BlockRun): Promise<SectionResult[]> {
  const root = join(run.dir, 'root');
  for (const dir of ['opt/nomad/data/host_volume_plugins', 'srv', 'tmp']) await fs.ensureDir(join(root, dir));
  const cwdFile = join(run.dir, 'cwd');
  await fs.writeFile(cwdFile, run.checkout);
  const results: SectionResult[] = [];
  for (const section of [...new Set(blocks.map((b) => b.section))]) {
    const these = blocks.filter((b) => b.section === section);
    const started = performance.now();
    const result = await runBash(sectionScript(these, run, cwdFile), root, runEnv(run), run.namespace ?? true);
    const output = result.all ?? '';
    const begun = [...output.matchAll(new RegExp(`^${BEGIN} (\\S+)$`, 'gm'))].map((m) => m[1]);
    const ended = [...output.matchAll(new RegExp(`^${END} (\\S+)$`, 'gm'))].map((m) => m[1]!);
    results.push({
      section,
      blocks: these,
      exitCode: result.exitCode,
      output,
      failed: these.find((b) => begun.at(-1) === idOf(b)) ?? these[0]!,
      ended,
      seconds: Math.round((performance.now() - started) / 1000),
    });
    console.log(`${these[0]!.page} ${section}: exit ${result.exitCode} in ${results.at(-1)!.seconds} s`);
    if (result.exitCode !== 0) break;
  }
  return results;
}

/** Fails unless every section ran every one of its blocks to the end: names the block that failed, and its output. */
export function expectSectionsRan(
  results: readonly SectionResult[],
  blocks: readonly Block[],
  expect: (value: unknown, message?: string) => { toBe(v: unknown): void; toEqual(v: unknown): void },
): void {
  for (const r of results) {
    expect(r.exitCode, `${idOf(r.failed)} (${r.section})\n${r.failed.text}\n--- output\n${r.output}`).toBe(0);
    expect(r.ended, `every block of ${r.section} ran to its end`).toEqual(r.blocks.map(idOf));
  }
  expect(
    results.flatMap((r) => r.blocks.map(idOf)),
    'every section ran',
  ).toEqual(blocks.map(idOf));
}
