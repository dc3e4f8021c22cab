// dist/dhv-loopback is a CommonJS bundle without an extension inside a "type": "module"
// package, so node would load it as ESM here. A package.json in dist/ marks it CommonJS;
// copied into a plugin directory (no package.json there), the file needs nothing else.
import { writeFile } from 'node:fs/promises';

await writeFile(new URL('../dist/package.json', import.meta.url), '{ "type": "commonjs" }\n');
