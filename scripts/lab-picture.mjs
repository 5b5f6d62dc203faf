#!/usr/bin/env node
// Draws docs/lab-picture.svg (shown in README's tour) from docs/lab-picture.json, a picture model of
// the default lab on kind as `ocm-lab status -o json --svg FILE` prints it under `picture`.
// Usage: npm run picture   (builds first), or: node scripts/lab-picture.mjs [model.json] [out.svg]
import fs from 'node:fs/promises';

const root = new URL('../', import.meta.url);
const [input = new URL('docs/lab-picture.json', root), output = new URL('docs/lab-picture.svg', root)] = process.argv.slice(2);
const { labPictureSvg } = await import(new URL('dist/lab/picture.js', root).href);
await fs.writeFile(output, labPictureSvg(JSON.parse(await fs.readFile(input, 'utf8'))));
process.stdout.write(`wrote ${output instanceof URL ? output.pathname : output}\n`);
