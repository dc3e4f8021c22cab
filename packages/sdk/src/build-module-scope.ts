import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

const MARKER = `${JSON.stringify({ type: 'commonjs' })}\n`;

/**
 * Node loads an extensionless file as CommonJS or ESM according to the nearest
 * package.json. A plugin bundle (CommonJS) written inside a `"type": "module"` package,
 * such as a freshly scaffolded plugin project, would be loaded as ESM and die on
 * `require`; a `{"type":"commonjs"}` package.json beside it keeps it CommonJS. Returns
 * the marker's path when one was written.
 */
export async function keepCommonJsScope(outfile: string): Promise<string | undefined> {
  const outdir = dirname(outfile);
  for (let dir = outdir; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    const text = await readFile(manifest, 'utf8').catch(() => undefined);
    if (text !== undefined) {
      let type: unknown;
      try {
        type = (JSON.parse(text) as { type?: unknown }).type;
      } catch {
        return undefined; // node will complain about it itself, naming the file
      }
      if (type !== 'module') return undefined;
      if (dir === outdir) {
        throw new Error(
          `${manifest} says "type": "module", so node would load the CommonJS bundle ${outfile} as ESM; write the bundle to another folder (e.g. dist/)`,
        );
      }
      await writeFile(join(outdir, 'package.json'), MARKER);
      return join(outdir, 'package.json');
    }
    if (dirname(dir) === dir) return undefined;
  }
}
