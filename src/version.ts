import { readFileSync } from 'node:fs';

/**
 * This package's version, read from the package.json beside src/ and dist/ (yargs would read the one above node_modules,
 * the user's project once installed with npm). It names our image too (src/images/catalogue.ts).
 */
export const PACKAGE_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
