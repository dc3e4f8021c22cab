import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runConformance } from '../runner.js';
import { removeTempDir, tempDir } from '../../../../../test/support/kit.js';

/**
 * errors.injected-failures-leave-nothing against bash plugins that honour DHVSDK_FAIL_AT as
 * an SDK plugin does (`injected failure at step 2 (write-info)` as their {"error"}): two
 * steps and one tool call in each create; the leaky one leaves its folder when its second
 * step fails, the tidy one removes it first.
 */

let dir = '';
afterEach(async () => {
  if (dir) await removeTempDir(dir);
  dir = '';
});

const plugin = (tidy: boolean) => `#!/bin/bash
set -u
at="\${DHVSDK_FAIL_AT:-}"
made=''
steps=0
tools=0
fail() {
  ${tidy ? '[[ -n "$made" ]] && /bin/rm -rf -- "$made"' : ':'}
  printf '{"error": "%s"}\\n' "$1"
  exit 1
}
step() { steps=$((steps + 1)); [[ "$at" == "step:$steps" ]] && fail "injected failure at step $steps ($1)"; return 0; }
tool() { tools=$((tools + 1)); [[ "$at" == "tool:$tools" ]] && fail "injected failure at tool $tools ($1)"; return 0; }
case "\${1:-}" in
fingerprint) printf '{"version": "1.0.0"}\\n' ;;
create)
  path="$DHV_VOLUMES_DIR/$DHV_VOLUME_ID"
  step make-dir
  tool mkdir
  /bin/mkdir -p -m 0700 -- "$path" || fail "could not create $path"
  made="$path"
  step write-info
  printf 'made\\n' > "$path/.info"
  printf '{"path": "%s", "bytes": 0}\\n' "$path"
  ;;
delete)
  /bin/rm -rf -- "$DHV_VOLUMES_DIR/$DHV_VOLUME_ID"
  printf '{}\\n'
  ;;
esac
`;

async function injected(text: string) {
  dir = await tempDir('injected-faults');
  const file = join(dir, 'plugin');
  await writeFile(file, text);
  await chmod(file, 0o755);
  const report = await runConformance(file, { only: ['errors.injected-failures-leave-nothing'] });
  expect(report.results.map((r) => r.id)).toEqual(['errors.injected-failures-leave-nothing']);
  return report.results[0]!;
}

describe('a create made to fail at each step and tool call in turn', () => {
  it('names the fault point and what it left, and says how an SDK plugin undoes a step', async () => {
    const result = await injected(plugin(false));
    expect(result).toMatchObject({ status: 'fail', severity: 'recommended' });
    expect(result.reason).toMatch(
      new RegExp(
        '^made to fail at step 2 \\(write-info\\) \\(DHVSDK_FAIL_AT=step:2\\), the create left behind: ' +
          'volumes/[0-9a-f-]{36}/\\. The agent never calls delete after a failed create: give each step that makes ' +
          "something its undo \\(ctx\\.step's third argument, or ctx\\.undo\\)$",
      ),
    );
  });

  it('passes a plugin that undoes what it made, counting the steps and tool calls it failed', async () => {
    const result = await injected(plugin(true));
    expect(result).toMatchObject({
      status: 'pass',
      notes: ['made create fail at each of its 2 step(s) and 1 tool call(s) in turn; none left anything'],
    });
  });

  it('cannot judge a plugin whose create fails on its own, before any fault', async () => {
    const broken = plugin(true).replace('step make-dir\n', 'fail "no space left"\n');
    const result = await injected(broken);
    expect(result).toMatchObject({
      status: 'skip',
      reason:
        'create failed before any fault was injected (exit status 1: {"error": "no space left"}); the other checks say why',
    });
  });
});
