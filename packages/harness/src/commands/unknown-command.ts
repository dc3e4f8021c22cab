import { toConfiguredId, type Interfaces } from '@oclif/core';
import { UsageError } from '../errors/dhv-error.js';

/** How far (in edits) a typed word may be from a command or topic for it to be suggested. */
const MAX_DISTANCE = 3;

/**
 * The error for a command line whose words name no command or topic: the commands and
 * topics nearest to what was typed, and where the list of all of them is. It is a usage
 * mistake (exit 2), and it never asks anything: a script typing it gets its answer.
 */
export function unknownCommandError(config: Interfaces.Config, id: string): UsageError {
  // oclif joins every word before the first flag into the ID: `volume creat spec.hcl`.
  // The typo is the first word that is not a topic; a word after it may finish a command.
  const words = id.split(':');
  let topicWords = 0;
  while (topicWords < words.length - 1 && config.findTopic(words.slice(0, topicWords + 1).join(':'))) topicWords++;
  const head = words.slice(0, topicWords + 1).join(':');
  const next = words[topicWords + 1];
  const nearest = suggestFor(config, head);
  const finished = next === undefined ? [] : nearest.filter((s) => config.findCommand(`${s}:${next}`));
  const typed = toConfiguredId(finished.length > 0 ? `${head}:${next}` : head, config);
  const suggestions = (finished.length > 0 ? finished.map((s) => `${s}:${next}`) : nearest).map((s) =>
    toConfiguredId(s, config),
  );
  const topic = topicWords > 0 ? toConfiguredId(words.slice(0, topicWords).join(':'), config) : undefined;
  const help = topic === undefined ? `${config.bin} help` : `${config.bin} help ${topic}`;
  const lines = [`${typed} is not a ${config.bin} command.`];
  if (suggestions.length > 0)
    lines.push(`Did you mean ${suggestions.map((s) => `\`${config.bin} ${s}\``).join(' or ')}?`);
  lines.push(`Run \`${help}\` for the list of ${topic === undefined ? 'commands' : `${topic} commands`}.`);
  return new UsageError(lines.join('\n'), 'UNKNOWN_COMMAND', { command: typed, suggestions });
}

/** Visible commands and topics, nearest first: those the typed words begin, else those a few edits away. */
function suggestFor(config: Interfaces.Config, id: string): string[] {
  const visible = [
    ...config.commands.filter((c) => !c.hidden).flatMap((c) => [c.id, ...c.aliases]),
    ...config.topics.filter((t) => !t.hidden).map((t) => t.name),
  ];
  // Words are compared with words at the same depth: `volum` with topics and top-level commands.
  const depth = id.split(':').length;
  const candidates = [...new Set(visible)].filter((c) => c.split(':').length === depth);
  const started = candidates.filter((c) => c.startsWith(id) && c !== id);
  if (started.length > 0) return started.sort().slice(0, 3);
  return candidates
    .map((c) => ({ c, distance: editDistance(id, c) }))
    .filter(({ c, distance }) => distance <= Math.min(MAX_DISTANCE, Math.floor(c.length / 2)))
    .sort((a, b) => a.distance - b.distance || a.c.localeCompare(b.c))
    .slice(0, 3)
    .map(({ c }) => c);
}

/** Levenshtein distance: insertions, deletions and substitutions. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
