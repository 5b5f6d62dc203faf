import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it, vi } from 'vitest';
import { BUILTIN_ADDONS, builtinAddonNames, builtinAddons, isBuiltinAddon } from '../../src/addons/registry.js';
import { DEFAULT_ADDONS, UPSTREAM_ADDONS } from '../../src/config/index.js';
import { useTempDir } from '../support/temp-dir.js';
import { VALID_LAB_FILE } from '../support/lab-file.js';

// Issue 42: adding a built-in addon touches its folder and its line in src/addons/registry.ts, nothing else.
// The registry is the only list of the built-in addons; a second one would have to be kept in step by hand.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Lists that name built-in addons but are not a list of them, each with what it says instead (file, then the
 * variable or property the list is the value of).
 */
const NOT_A_LIST_OF_ADDONS: Record<string, string> = {
  'src/config/upstream-addons.ts UPSTREAM_ADDONS': "which addons upstream's build can stand in for (images and charts of upstream)",
  'src/config/types.ts DEFAULT_ADDONS': 'which addons the default lab runs',
  'src/addons/cluster-gateway/builtin.ts addons': "what cluster-gateway's definition requires beside it",
  'src/provision/recipes.ts family': "the Go modules provisioning builds, upstream's addons among Kubernetes, etcd and the rest",
};

/** The name a list is the value of: its variable, property or type alias. */
function holderName(node: ts.Node): string {
  for (let n: ts.Node | undefined = node.parent; n; n = n.parent) {
    if (ts.isVariableDeclaration(n) || ts.isPropertyAssignment(n) || ts.isPropertySignature(n) || ts.isTypeAliasDeclaration(n))
      return ts.isIdentifier(n.name) || ts.isStringLiteral(n.name) ? n.name.text : '(anonymous)';
    if (ts.isStatement(n)) break;
  }
  return '(anonymous)';
}

/** Array literals and union types in `source` with two or more built-in addon names: `<holder>: <names>` each. */
function addonLists(fileName: string, source: string, names: readonly string[]): { holder: string; names: string[]; line: number }[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const found: { holder: string; names: string[]; line: number }[] = [];
  const visit = (node: ts.Node) => {
    const items = ts.isArrayLiteralExpression(node) ? node.elements : ts.isUnionTypeNode(node) ? node.types : undefined;
    if (items) {
      const literal = (e: ts.Node) => (ts.isLiteralTypeNode(e) ? e.literal : e);
      const named = items.map(literal).flatMap((e) => (ts.isStringLiteralLike(e) && names.includes(e.text) ? [e.text] : []));
      if (named.length >= 2) found.push({ holder: holderName(node), names: named, line: file.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await fs.readdir(path.join(ROOT, dir), { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : Promise.resolve(e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []))),
  );
  return nested.flat();
}

describe('the built-in addons are listed once, in src/addons/registry.ts', () => {
  it('no other list of built-in addon names is written in src/ (arrays and union types)', async () => {
    const names = builtinAddonNames();
    const lists: string[] = [];
    const excepted = new Set<string>();
    for (const file of await sourceFiles('src')) {
      if (file === 'src/addons/registry.ts') continue;
      const text = await fs.readFile(path.join(ROOT, file), 'utf8');
      // Parsed only when it quotes two names at all: most files name none.
      if (names.filter((n) => ["'", '"', '`'].some((q) => text.includes(`${q}${n}${q}`))).length < 2) continue;
      for (const list of addonLists(file, text, names)) {
        const key = `${file} ${list.holder}`;
        if (key in NOT_A_LIST_OF_ADDONS) excepted.add(key);
        else lists.push(`${file}:${list.line}: ${list.holder} = ${list.names.join(', ')}`);
      }
    }
    if (lists.length)
      expect.fail(
        `built-in addon names listed outside src/addons/registry.ts; take them from the registry (builtinAddonNames, isBuiltinAddon, ` +
          `a field of each addon's builtin.ts), or, if the list says something else, add it to NOT_A_LIST_OF_ADDONS with what:\n  ${lists.join('\n  ')}`,
      );
    // Each exception still exists: one that went away is dropped from the table, not kept as a blind spot.
    expect([...excepted].sort()).toEqual(Object.keys(NOT_A_LIST_OF_ADDONS).sort());
  });

  it('the scan finds a hand-written list in an array, an `as const` tuple, a z.enum and a union type', () => {
    const names = builtinAddonNames();
    const sample = [
      "const A = ['cluster-proxy', 'managed-serviceaccount'];",
      "export const B = ['helloworld', 'cluster-gateway', 'x'] as const;",
      "const s = { addons: z.enum(['cluster-proxy', 'helloworld']) };",
      "type C = 'cluster-gateway' | 'managed-serviceaccount';",
      "const one = ['cluster-proxy'];",
    ].join('\n');
    expect(addonLists('sample.ts', sample, names).map((l) => `${l.line} ${l.holder} ${l.names.join(',')}`)).toEqual([
      '1 A cluster-proxy,managed-serviceaccount',
      '2 B helloworld,cluster-gateway',
      '3 addons cluster-proxy,helloworld',
      '4 C cluster-gateway,managed-serviceaccount',
    ]);
  });

  it('each registry line is keyed by its addon’s name, and the lists that name addons name built-in ones', () => {
    for (const [key, addon] of Object.entries(BUILTIN_ADDONS)) expect(addon.name, `BUILTIN_ADDONS['${key}']`).toBe(key);
    expect(UPSTREAM_ADDONS.filter((a) => !isBuiltinAddon(a))).toEqual([]);
    expect(DEFAULT_ADDONS.filter((a) => !isBuiltinAddon(a))).toEqual([]);
    for (const addon of builtinAddons()) {
      const required = addon.requires?.addons ?? [];
      expect(
        required.filter((a) => !isBuiltinAddon(a) || a === addon.name),
        `${addon.name}'s requires`,
      ).toEqual([]);
    }
    expect(BUILTIN_ADDONS['cluster-gateway']!.requires?.addons).toEqual(['cluster-proxy', 'managed-serviceaccount']);
  });
});

describe('a program that provides no addon vocabulary', () => {
  const dir = useTempDir('ocm-lab-vocabulary-');

  it('cannot read a lab file: an internal error, not a lab that names any addon', async () => {
    // Fresh modules: this file imports no provider, and the ones other files register are not these.
    vi.resetModules();
    const { validateLabFile } = await import('../../src/config/load.js');
    const file = path.join(dir.path, 'lab.yaml');
    await fs.writeFile(file, `addons: [no-such-addon]\n${VALID_LAB_FILE}`);
    await expect(validateLabFile(file)).rejects.toThrow(/^internal: no addon vocabulary was provided/);
    // The same fresh modules, given the registry's vocabulary as src/cli/main.ts gives it, check the file's addons.
    const { provideAddonVocabulary } = await import('../../src/config/addon-vocabulary.js');
    const { addonVocabulary } = await import('../../src/addons/registry.js');
    provideAddonVocabulary(async () => addonVocabulary());
    await expect(validateLabFile(file)).rejects.toThrow(`${file}:1: addons[0] = "no-such-addon": is not an addon ocm-lab knows`);
  });
});
