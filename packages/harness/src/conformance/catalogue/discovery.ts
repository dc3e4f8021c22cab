import { lstat, stat } from 'node:fs/promises';
import { AGENT_TIMEOUT_MS, ENV } from '@dhv/sdk/plugin';
import { buildEnvironment, fingerprintRequest, loadedMachineHint, outputText } from '@dhv/sdk/client';
import { parseGoVersion } from '@dhv/sdk';
import { VERSION_FIELD, field, parsePluginStdout } from '../inspect.js';
import { clip, describeRun, succeeded } from '../raw-run.js';
import type { Check, CheckContext } from '../types.js';
import { fingerprintRun } from './fingerprint-run.js';

const REF = 'PROTOCOL.md § Discovery (plugin fingerprint)';
/** Above this a fingerprint still fits the agent's budget, but a busy host or a cold disk can push it over. */
const FINGERPRINT_WARN_MS = 250;
const SPEED_SAMPLES = 3;

export const discoveryChecks: Check[] = [
  {
    id: 'discovery.executable',
    area: 'discovery',
    title: 'The plugin is a file with an execute bit, not a directory, so the agent lists it as a candidate.',
    protocolRef: REF,
    severity: 'required',
    gradeReason:
      'the agent lists only entries with an execute bit that are not directories: without one the plugin does not exist for Nomad',
    async run(ctx: CheckContext) {
      const link = await lstat(ctx.plugin).catch(() => undefined);
      if (!link) ctx.fail(`${ctx.plugin} does not exist`);
      const target = await stat(ctx.plugin).catch(() => undefined);
      if (!target) ctx.fail(`${ctx.plugin} is a symbolic link to something that does not exist`);
      if (target.isDirectory()) ctx.fail(`${ctx.plugin} is a directory; the agent skips directories`);
      if ((target.mode & 0o111) === 0)
        ctx.fail(`${ctx.plugin} has no execute bit (mode ${(target.mode & 0o777).toString(8)}); chmod +x it`);
      if (link.isSymbolicLink())
        ctx.note('a symbolic link: the agent refuses it when it resolves outside the plugin directory');
    },
  },
  {
    id: 'discovery.fingerprint-succeeds',
    area: 'discovery',
    title: `fingerprint exits 0 with only ${ENV.operation} in its environment.`,
    protocolRef: REF,
    severity: 'required',
    gradeReason:
      'a failing fingerprint is skipped with a log line: the node never publishes the plugin, so no volume can be placed with it',
    needs: ['discovery.executable'],
    async run(ctx: CheckContext) {
      const run = await fingerprintRun(ctx);
      if (!succeeded(run)) ctx.fail(`fingerprint failed: ${describeRun(run)}`);
    },
  },
  {
    id: 'discovery.fingerprint-fast',
    area: 'discovery',
    title: `fingerprint answers within the agent's ${AGENT_TIMEOUT_MS.fingerprint} ms discovery budget.`,
    protocolRef: REF,
    severity: 'required',
    gradeReason: 'discovery gives a fingerprint 1 s and skips the plugin past it: the node never publishes it',
    needs: ['discovery.fingerprint-succeeds'],
    alone: true,
    async run(ctx: CheckContext) {
      const env = buildEnvironment('fingerprint', fingerprintRequest(), ctx.plugin);
      const times: number[] = [];
      let over = 0;
      for (let i = 0; i < SPEED_SAMPLES && over < 2; i++) {
        const run = await ctx.runRaw(['fingerprint'], env, { timeoutMs: AGENT_TIMEOUT_MS.fingerprint });
        times.push(run.durationMs);
        if (!succeeded(run)) over++;
      }
      const median = [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
      const shown = times.map((t) => `${Math.round(t)} ms`).join(', ');
      if (over >= 2)
        ctx.fail(
          [
            `fingerprint did not answer within ${AGENT_TIMEOUT_MS.fingerprint} ms (runs: ${shown}); the agent skips the plugin`,
            ...loadedMachineHint(),
          ].join('; '),
        );
      ctx.note(`median ${Math.round(median)} ms over ${times.length} runs`);
      if (median > FINGERPRINT_WARN_MS) {
        ctx.warn(
          `fingerprint took ${Math.round(median)} ms (median); above ${FINGERPRINT_WARN_MS} ms a busy host can push it past the ${AGENT_TIMEOUT_MS.fingerprint} ms budget`,
        );
      }
    },
  },
  {
    id: 'discovery.fingerprint-one-json-object',
    area: 'discovery',
    title: 'fingerprint writes exactly one JSON object to stdout and nothing else.',
    protocolRef: REF,
    severity: 'required',
    gradeReason: 'stdout that does not decode as one JSON object is a fingerprint error: the plugin is skipped',
    needs: ['discovery.fingerprint-succeeds'],
    async run(ctx: CheckContext) {
      const run = await fingerprintRun(ctx);
      const doc = parsePluginStdout(run.stdout);
      if (!doc.ok)
        ctx.fail(
          `stdout is not one JSON document: ${doc.error} (stdout: ${JSON.stringify(clip(outputText(run.stdout)))})`,
        );
      if (doc.value.kind !== 'object') ctx.fail(`stdout is a JSON ${doc.value.kind}, not an object`);
    },
  },
  {
    id: 'discovery.version-present',
    area: 'discovery',
    title: 'fingerprint reports a "version" (without one a real agent crashes).',
    protocolRef: REF,
    severity: 'required',
    gradeReason:
      'a fingerprint without "version" crashes a real agent (nil version), taking down every plugin and volume on the node',
    needs: ['discovery.fingerprint-one-json-object'],
    async run(ctx: CheckContext) {
      const doc = parsePluginStdout((await fingerprintRun(ctx)).stdout);
      const version = doc.ok ? field(doc.value, VERSION_FIELD) : undefined;
      if (version === undefined || version.kind === 'null')
        ctx.fail('the fingerprint has no "version"; a real Nomad agent dereferences a nil version and crashes');
    },
  },
  {
    id: 'discovery.version-valid',
    area: 'discovery',
    title: '"version" is a string that parses as a hashicorp/go-version version.',
    protocolRef: REF,
    severity: 'required',
    gradeReason: 'a version go-version cannot parse is a fingerprint error: the plugin is skipped',
    needs: ['discovery.version-present'],
    async run(ctx: CheckContext) {
      const doc = parsePluginStdout((await fingerprintRun(ctx)).stdout);
      const version = doc.ok ? field(doc.value, VERSION_FIELD) : undefined;
      if (version === undefined) ctx.skip('no version to validate');
      if (version.kind !== 'string') ctx.fail(`"version" is a JSON ${version.kind}; it must be a string like "1.0.0"`);
      const parsed = parseGoVersion(version.value);
      if (!parsed.ok) ctx.fail(`${JSON.stringify(version.value)} is not a valid go-version: ${parsed.error}`);
      ctx.note(`${JSON.stringify(version.value)}, stored by the agent as ${parsed.version.normalized}`);
    },
  },
];
