import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempAgent, type TempAgent } from './support/dhv-agent.js';

let agent: TempAgent;
beforeEach(async () => {
  agent = await tempAgent();
});
afterEach(async () => {
  await agent.cleanup();
});

/** A plugin that keeps the DHV_PARAMETERS it was given, byte for byte. */
const recorder = (file: string) => `#!/bin/bash
case "$1" in
  fingerprint) echo '{"version": "1.0.0"}' ;;
  create) printf '%s' "$DHV_PARAMETERS" > '${file}'; echo "{\\"path\\": \\"$DHV_VOLUMES_DIR/$DHV_VOLUME_ID\\", \\"bytes\\": 0}" ;;
  delete) echo '{}' ;;
esac
`;

describe('a spec written the way users write them reaches the plugin as Nomad passes it', () => {
  it('quoted and dotted keys, repeated keys and blocks, an integer past 2^53 and an octal number', async () => {
    const recorded = join(agent.dir, 'parameters.json');
    await agent.plugin('recorder', recorder(recorded));
    const spec = await agent.file(
      'e2e.hcl',
      [
        'name = "first"',
        'name = "e2e"',
        'type = "host"',
        'plugin_id = "recorder"',
        'parameters {',
        '  "fs-type"       = "xfs"',
        '  mount.options   = "noatime"',
        '  "mount.options" = "nodiratime"',
        '  seed            = 9007199254740993',
        '  mode            = 0755',
        '  label           = "50%{off} ${x}"',
        '}',
        'parameters {',
        '  "fs-type" = "ext4"',
        '}',
        '',
      ].join('\n'),
    );
    const run = await agent.dhv('volume', 'create', spec);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(/Created host volume e2e with ID/);
    expect(run.stderr).toMatch(/the unquoted number 0755 is 493 to Nomad's HCL reader \(octal\)/);
    // Go's json.Marshal of the map Nomad decoded: keys sorted, the last value of a repeated key.
    expect(await readFile(recorded, 'utf8')).toBe(
      '{"fs-type":"ext4","label":"50%{off} ${x}","mode":"493","mount.options":"nodiratime","seed":"9007199254740993"}',
    );
  });

  it('shows the warnings with the error when Nomad would refuse the spec', async () => {
    const spec = await agent.file(
      'bad.hcl',
      'name = "w"\ntype = "host"\nplugin = "mkdir"\ncapacity_mn = "1GiB"\nparameters {\n  mode = 0755\n}\ncapacity_min = "2GiB"\n',
    );
    const run = await agent.dhv('volume', 'create', spec);
    expect(run.exitCode).not.toBe(0);
    expect(run.stderr).toMatch(/capacity_max \(0\) must be larger than capacity_min \(2147483648\)/);
    expect(run.stderr).toMatch(/the unquoted number 0755 is 493/);
    expect(run.stderr).toMatch(/unknown key "plugin" is ignored, as Nomad ignores it \(did you mean plugin_id\?\)/);
    expect(run.stderr).toMatch(
      /unknown key "capacity_mn" is ignored, as Nomad ignores it \(did you mean capacity_min\?\)/,
    );
  });

  it("shows the octal warning beside the built-in mkdir's refusal of mode 493", async () => {
    const spec = await agent.file(
      'mode.hcl',
      'name = "m"\ntype = "host"\nplugin_id = "mkdir"\nparameters {\n  mode = 0755\n}\n',
    );
    const run = await agent.dhv('volume', 'create', spec);
    expect(run.exitCode).not.toBe(0);
    expect(run.stderr).toMatch(/invalid value for "mode": strconv\.ParseUint: parsing "493": invalid syntax/);
    expect(run.stderr).toMatch(/the unquoted number 0755 is 493 to Nomad's HCL reader/);
  });
});

describe('dhv plugin run passes sizes as the agent does', () => {
  it('passes --capacity-max 9223372036854775807 (the largest int64) exactly, and refuses one more', async () => {
    const plugin = await agent.plugin('recorder', recorder(join(agent.dir, 'p.json')));
    const args = [
      'plugin',
      'run',
      plugin,
      'create',
      '--volume-id',
      '1e1d4540-14f9-2515-8502-24d46291717d',
      '--name',
      't',
    ];
    const out = await agent.json<{ environment: Record<string, string> }>(
      ...args,
      '--capacity-max',
      '9223372036854775807',
    );
    expect(out.environment.DHV_CAPACITY_MAX_BYTES).toBe('9223372036854775807');
    const over = await agent.dhv(...args, '--capacity-max', '9223372036854775808');
    expect(over.exitCode).not.toBe(0);
    expect(over.stderr).toMatch(/too large: the largest is 9223372036854775807 bytes/);
  });
});
