import { mkdir, readFile, rmdir, unlink } from '../helpers/fs-calls.js';
import { replaceFile } from '../helpers/replace-file.js';
import { join } from 'node:path';
import type { Parameters } from '../protocol/request.js';

/**
 * The parameters of each volume's last successful create, kept for a plugin that declares
 * a parameter schema, so an update can be compared with what the volume was made with.
 * They live beside the volumes, in `<volumes dir>/.<plugin>/<volume ID>.parameters.json`
 * (they move with the disk; a file named by its volume's ID in the plugin's hidden folder
 * is where the agent's gc looks for what a plugin keeps of a volume), and go with a
 * successful delete.
 */
function folderOf(pluginName: string, volumesDir: string): string {
  return join(volumesDir, `.${pluginName}`);
}

const fileName = (volumeId: string) => `${volumeId}.parameters.json`;

export async function recallParameters(
  pluginName: string,
  volumesDir: string,
  volumeId: string,
): Promise<Parameters | null | undefined> {
  let text: string;
  try {
    text = await readFile(join(folderOf(pluginName, volumesDir), fileName(volumeId)), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const kept = JSON.parse(text) as { parameters?: unknown };
    return isParameters(kept.parameters) ? kept.parameters : undefined;
  } catch {
    return undefined; // a damaged record is as good as none: the update is not compared
  }
}

export async function rememberParameters(
  pluginName: string,
  volumesDir: string,
  volumeId: string,
  parameters: Parameters | null,
): Promise<void> {
  const folder = folderOf(pluginName, volumesDir);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const path = join(folder, fileName(volumeId));
  await replaceFile(path, `${JSON.stringify({ parameters })}\n`);
}

export async function forgetParameters(pluginName: string, volumesDir: string, volumeId: string): Promise<void> {
  const folder = folderOf(pluginName, volumesDir);
  await unlink(join(folder, fileName(volumeId))).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
  await rmdir(folder).catch(() => {}); // tidy only: another volume's record, or the plugin's own files, keep it
}

function isParameters(value: unknown): value is Parameters | null {
  if (value === null) return true;
  if (typeof value !== 'object' || Array.isArray(value)) return false;
  return Object.values(value).every((v) => typeof v === 'string');
}
