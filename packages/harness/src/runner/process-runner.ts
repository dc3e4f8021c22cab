import { CleanupJournal } from '@dhv/sdk/host';
import { ProcessRunner } from '@dhv/sdk/client';

/** Where the process groups of the plugins run are recorded while they run, when a command asked for it. */
let journal: CleanupJournal | undefined;

/**
 * Records every plugin's process group in this process's cleanup journal while it runs,
 * so that a dhv killed outright has its plugins killed by the next dhv command (what
 * `dhv check`, `dhv demo` and `dhv replay` ask for; agent commands keep Nomad's behaviour).
 */
export function journalProcessGroups(): CleanupJournal {
  journal = CleanupJournal.forThisProcess();
  return journal;
}

/**
 * The SDK's runner of plugins as programs, with this process's cleanup journal told of
 * every plugin's process group once a command asked for it: the harness's only
 * `ProcessRunner` (lint: eslint's no-restricted-imports).
 */
export const processRunner = new ProcessRunner({
  onProcessGroup(pgid, exited) {
    if (exited) journal?.forgetProcessGroup(pgid);
    else journal?.recordProcessGroup(pgid);
  },
});
