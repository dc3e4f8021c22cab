import { dhvDocument } from '../../presenters/dhv-document.js';
import { Flags } from '@oclif/core';
import { DhvCommand, agentFlags } from '../dhv-command.js';
import { AgentError } from '../../errors/agent-error.js';
import type { Fingerprint } from '../../agent/plugins.js';
import { fingerprintJson } from '../../presenters/agent-json.js';
import { fingerprintText } from '../../presenters/format-node.js';

export default class AgentFingerprint extends DhvCommand {
  static override summary = 'Discover the plugins in the plugin dir and print the node attributes they give.';
  static override description =
    'Fingerprints every executable in the plugin dir concurrently, 1 s each, as the agent does; a failing plugin is skipped with the reason. ' +
    "The built-in mkdir is always present. The result becomes the node's attributes. " +
    'Exits 1 when a plugin was skipped (--allow-skipped exits 0 then) or would crash a real Nomad agent (always), so CI can gate a deploy on it.';
  static override examples = [
    '<%= config.bin %> agent fingerprint --plugin-dir /opt/nomad/host_volume_plugins',
    '<%= config.bin %> agent fingerprint --plugin-dir /opt/nomad/host_volume_plugins --allow-skipped',
  ];
  static override flags = {
    ...agentFlags,
    'allow-skipped': Flags.boolean({
      description:
        'Exit 0 though a plugin was skipped (the node publishes the others). A plugin that would crash a real Nomad agent still exits 1.',
      default: false,
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(AgentFingerprint);
    const agent = await this.openAgent(flags);
    const fingerprint = await agent.fingerprint();
    if (this.jsonOutput) this.printJson(dhvDocument('FingerprintReport', fingerprintJson(fingerprint)));
    else this.print(fingerprintText(fingerprint));
    // The verdict ends the command as every failure does: `Error: ...`, or with --json the error document (and the warnings).
    const verdict = failedVerdict(fingerprint, flags['allow-skipped']);
    if (verdict !== undefined) throw verdict;
  }
}

/** Why the fingerprint fails a CI gate, in one line (the sections above say each plugin's reason), or undefined. */
function failedVerdict(fingerprint: Fingerprint, allowSkipped: boolean): AgentError | undefined {
  const crash = fingerprint.nomadCrash;
  if (crash)
    return new AgentError(
      'NOMAD_WOULD_CRASH',
      `a real Nomad agent would crash on ${crash.pluginId} (Nomad Crash above); fix it before deploying it`,
      { plugin: crash.pluginId },
    );
  if (fingerprint.skipped.length === 0 || allowSkipped) return undefined;
  const ids = fingerprint.skipped.map((s) => s.id).sort();
  return new AgentError(
    'PLUGINS_SKIPPED',
    `${ids.length} plugin${ids.length === 1 ? '' : 's'} skipped (${ids.join(', ')}; Skipped Plugins above says why); --allow-skipped exits 0 with the others published`,
    { plugins: ids },
  );
}
