import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  decodeVolumeSpecAsNomad,
  SpecRefused,
  type ApiHostVolume,
} from '../packages/harness/src/volume-specs/decode-host-volume.js';
import { validateHostVolume } from '../packages/harness/src/volume-specs/validate-host-volume.js';
import { volumeSpecFromText } from '../packages/harness/src/volume-specs/volume-spec.js';

/**
 * Every spec of vectors/nomad-specs/ (Nomad's own decode and validation, compiled and
 * run), replayed through dhv's reader: accept or refuse at the same stage, the same
 * decoded fields, Nomad's error words (exactly, or their Nomad-made prefix where the
 * rest is Go's standard library), and the servers' verdict and messages.
 */
const DIR = join(import.meta.dirname, 'vectors/nomad-specs');

interface Vector {
  spec: string;
  nomad_accepts: boolean;
  cli_parser: {
    result: 'decoded' | 'refused' | 'csi';
    stage: string | null;
    error: string | null;
    error_exact?: boolean;
    error_prefix?: string;
    volume: Record<string, unknown> | null;
  };
  server_validation: {
    ran: boolean;
    valid: boolean | null;
    messages: string[] | null;
    error: string | null;
    error_exact?: boolean;
    error_prefix?: string;
    volume: Record<string, unknown> | null;
  };
}

const vectors = readdirSync(DIR)
  .filter((f) => f.endsWith('.json') && !f.endsWith('.spec.json'))
  .map((f) => JSON.parse(readFileSync(join(DIR, f), 'utf8')) as Vector);

/** The decoded volume with capacities as decimal strings, as the vectors write them. */
function asVector(vol: ApiHostVolume): Record<string, unknown> {
  return {
    ...vol,
    RequestedCapacityMinBytes: vol.RequestedCapacityMinBytes.toString(),
    RequestedCapacityMaxBytes: vol.RequestedCapacityMaxBytes.toString(),
    CapacityBytes: vol.CapacityBytes.toString(),
  };
}

function compareError(actual: string, expected: string, exact: boolean | undefined, prefix: string | undefined) {
  if (exact === false) expect(actual.startsWith(prefix!)).toBe(true);
  else expect(actual).toBe(expected);
}

describe('volume specs decoded as Nomad decodes them (vectors/nomad-specs)', () => {
  it('has every vector', () => {
    expect(vectors.length).toBe(96);
  });

  for (const v of vectors) {
    it(`${v.spec}: ${v.cli_parser.result}${v.server_validation.valid === false ? ', refused by the servers' : ''}`, () => {
      const text = readFileSync(join(DIR, v.spec), 'utf8');
      const cli = v.cli_parser;
      if (cli.result !== 'decoded') {
        let refused: unknown;
        try {
          decodeVolumeSpecAsNomad(text);
        } catch (err) {
          refused = err;
        }
        expect(refused).toBeInstanceOf(SpecRefused);
        const err = refused as SpecRefused;
        expect(err.stage).toBe(cli.stage);
        if (cli.error !== null) compareError(err.message, cli.error, cli.error_exact, cli.error_prefix);
        // dhv's own reader refuses it too.
        expect(() => volumeSpecFromText(text, 'create', v.spec)).toThrow();
        return;
      }
      const vol = decodeVolumeSpecAsNomad(text);
      expect(asVector(vol)).toEqual(cli.volume);

      const server = v.server_validation;
      const problems = validateHostVolume(vol);
      expect(problems.length === 0).toBe(server.valid);
      if (server.messages) {
        expect(problems).toEqual(server.messages);
      }
      if (server.valid) {
        const spec = volumeSpecFromText(text, 'create', v.spec);
        const canonical = server.volume!;
        // With an `id`, dhv updates that volume (its plugin is kept); the vector's servers create a new one.
        if (vol.ID === '') expect(spec.pluginId).toBe(canonical.PluginID);
        expect(spec.namespace).toBe(canonical.Namespace);
        expect(spec.parameters).toEqual(canonical.Parameters);
        expect(spec.capacityMinBytes.toString()).toBe(canonical.RequestedCapacityMinBytes);
        expect(spec.capacityMaxBytes.toString()).toBe(canonical.RequestedCapacityMaxBytes);
        expect(spec.capabilities.map((c) => ({ AttachmentMode: c.attachmentMode, AccessMode: c.accessMode }))).toEqual(
          canonical.RequestedCapabilities,
        );
      } else {
        expect(() => volumeSpecFromText(text, 'create', v.spec)).toThrow(
          server.messages ? server.messages[0]!.split('\n')[0] : '',
        );
      }
    });
  }
});
