import { Flags } from '@oclif/core';
import type { Agent } from '../../agent/agent.js';
import type { HostVolume } from '../../agent/volume-view.js';
import { colorOn, volumeWarningsText } from '../../presenters/format-volume.js';
import { readVolumeSpec, type VolumeSpec } from '../../volume-specs/volume-spec.js';
import { DhvCommand, agentFlags, type AgentFlagValues } from '../dhv-command.js';
import { findVolume } from './find-volume.js';
import { namespaceFlag, namespaceForSpec } from './namespace.js';
import { POLICY_OVERRIDE_NOTE, policyOverrideFlag } from './policy-override.js';

/** The flags `volume create` and `volume register` share. */
export const volumeWriteFlags = {
  ...agentFlags,
  'policy-override': policyOverrideFlag,
  id: Flags.string({
    description:
      "Update the volume with this ID, name, or a unique prefix of either (Nomad's -id), as `id =` in the spec would.",
  }),
  namespace: namespaceFlag,
};

interface VolumeWriteFlagValues extends AgentFlagValues {
  'policy-override': boolean;
  id?: string;
  namespace: string;
}

type Written = { volume: HostVolume; created: boolean };

/** The `--json` result both commands print, before the command heads it with its kind. */
export interface VolumeWriteResult {
  Volume: HostVolume;
  Created: boolean;
  Warnings: string[];
  Notes?: string[];
}

/** What create and register share: the spec read, placed in its namespace and under -id, written, and its warnings said. */
export abstract class VolumeWriteCommand extends DhvCommand {
  /**
   * Writes the volume the spec describes with `write`. Prints the JSON result and returns
   * undefined with --json; otherwise prints the notes and Nomad's `Volume Warnings:` block
   * and returns the volume for the command's own line.
   */
  protected async writeVolume(
    specPath: string,
    flags: VolumeWriteFlagValues,
    command: 'create' | 'register',
    write: (agent: Agent, spec: VolumeSpec) => Promise<Written>,
    head: (result: VolumeWriteResult) => object,
  ): Promise<HostVolume | undefined> {
    const read = await readVolumeSpec(specPath, command);
    const warnings: string[] = [...(read.warnings ?? [])];
    const agent = await this.openAgent(flags, { onWarning: (w) => warnings.push(w) });
    const namespace = namespaceForSpec(read.namespace, flags.namespace);
    const id = flags.id === undefined ? read.id : (await findVolume(agent, flags.id, namespace, { command })).ID;
    const notes = flags['policy-override'] ? [POLICY_OVERRIDE_NOTE] : [];
    // The spec's warnings explain failures too (mode = 0755 reaches the plugin as "493").
    const { volume, created } = await write(agent, { ...read, namespace, id }).catch((err: unknown) => {
      for (const w of warnings) this.warnLine(w);
      throw err;
    });
    if (this.jsonOutput) {
      this.printJson(
        head({ Volume: volume, Created: created, Warnings: warnings, ...(notes.length ? { Notes: notes } : {}) }),
      );
      return undefined;
    }
    for (const n of notes) this.warnLine(n);
    process.stdout.write(volumeWarningsText(warnings, { color: colorOn(process.stdout) }));
    return volume;
  }
}
