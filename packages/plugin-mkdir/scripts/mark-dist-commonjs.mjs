// The bundle is CommonJS in a file with no extension, and this package is "type":
// "module", so inside this repository node would read dist/dhv-mkdir as ESM and fail.
// A package.json beside it marks dist/ as CommonJS. Copied anywhere else (a plugin
// directory has no package.json), the file runs as CommonJS on its own.
import { writeFile } from 'node:fs/promises';

await writeFile(new URL('../dist/package.json', import.meta.url), '{ "type": "commonjs" }\n');
