import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadInternalCommands } from '../../src/cli/commands/internal/index.js';

// A runtime is its folder (src/runtime/<name>/) and its line in src/runtime/registry.ts (issue 42: adding a
// Docker-based runtime touches its folder and one registry line). This lists, for a runtime, the files outside its
// folder that reference it: import from its folder, or compare a runtime with its name ('kind' on a line about a
// runtime). Benchmarks are left out: they may import anything (.dependency-cruiser.cjs nothing-imports-bench) and
// compare runtimes by name on purpose. What stays outside, by design: message texts ("ocm-lab up --runtime kind"),
// and 'kind' meaning something else (the lab file's `kind:`, a Kubernetes object's kind, the kind CLI binary).

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map(async (e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [])),
  );
  return nested.flat();
}

/** Relative import specifiers of a module: static `from '…'` and dynamic `import('…')`. */
function importsOf(text: string): string[] {
  return [...text.matchAll(/(?:\bfrom\s+|\bimport\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1]!);
}

/** Files of src/ outside src/runtime/<name>/ (and bench/) that import its folder or name it as a runtime, each with how. */
async function referencesOutside(name: string): Promise<string[]> {
  const folder = path.join(SRC, 'runtime', name) + path.sep;
  const literal = new RegExp(`['"\`]${name}['"\`]`);
  const found: string[] = [];
  for (const file of await sourceFiles(SRC)) {
    const rel = path.relative(SRC, file);
    if (file.startsWith(folder) || rel.startsWith(`bench${path.sep}`)) continue;
    const text = await fs.readFile(file, 'utf8');
    const how: string[] = [];
    if (importsOf(text).some((spec) => path.resolve(path.dirname(file), spec).startsWith(folder))) how.push('imports its folder');
    const code = text.split('\n').filter((line) => !/^\s*(?:\/\/|\/\*|\*)/.test(line));
    if (code.some((line) => literal.test(line) && /runtime/i.test(line))) how.push(`names '${name}' as a runtime`);
    if (how.length) found.push(`${rel}: ${how.join(', ')}`);
  }
  return found.sort();
}

describe('a runtime is its folder and its registry line', () => {
  it('kind: nothing outside src/runtime/kind/ references it but runtime/registry.ts', async () => {
    expect(await referencesOutside('kind')).toEqual(['runtime/registry.ts: imports its folder']);
  });

  it('existing: nothing outside src/runtime/existing/ references it but runtime/registry.ts', async () => {
    expect(await referencesOutside('existing')).toEqual(['runtime/registry.ts: imports its folder']);
  });

  it("kind's own program in its nodes (internal vpc-gateway) comes with its registry line", async () => {
    const [command] = await loadInternalCommands('vpc-gateway');
    expect(command?.command).toBe('vpc-gateway');
    expect((await loadInternalCommands()).map((c) => c.command)).toContain('vpc-gateway');
  });

  it('sees an import of a runtime folder and a comparison with its name', () => {
    expect(importsOf("import { a } from '../runtime/kind/x.js';\nconst b = await import('./kind/y.js');")).toEqual(['../runtime/kind/x.js', './kind/y.js']);
    expect(importsOf("import { a } from 'node:path';")).toEqual([]);
  });
});
