import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { OCM_LAB_IMAGE } from '../../src/images/catalogue.js';

const GOLDEN_DIR = fileURLToPath(new URL('../unit/golden/', import.meta.url));

/** Our image as goldens spell it: named for the package version, which a release changes. */
const OCM_LAB_IMAGE_IN_GOLDENS = 'ocm-lab:<version>';

/** Compares `actual` with test/unit/golden/<name>; UPDATE_GOLDEN=1 rewrites the file instead. `testFile` names the test to rerun. */
export async function expectGolden(name: string, output: string, testFile: string): Promise<void> {
  const actual = output.replaceAll(OCM_LAB_IMAGE, OCM_LAB_IMAGE_IN_GOLDENS);
  const file = path.join(GOLDEN_DIR, name);
  if (process.env.UPDATE_GOLDEN === '1') {
    await fs.writeFile(file, actual);
    return;
  }
  const expected = await fs.readFile(file, 'utf8').catch(() => {
    throw new Error(`no golden file ${file}: run UPDATE_GOLDEN=1 npx vitest run --project unit ${testFile}, then review it`);
  });
  expect(actual).toBe(expected);
}
