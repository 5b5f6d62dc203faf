import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type IConfiguration, type ICruiseResult } from 'dependency-cruiser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The rules live in .dependency-cruiser.cjs (each with the reason for it); this
// file runs them over src/ and adds the one rule dependency-cruiser cannot
// state per dependency: no cycle between top-level folders of src/.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CONFIG_FILE = '.dependency-cruiser.cjs';
const config = createRequire(import.meta.url)(path.join(ROOT, CONFIG_FILE)) as IConfiguration;
const CYCLE_RULE = 'no-cycle-between-top-level-folders';

/** src/<folder> or src/<file>.ts: the node a module belongs to in the top-level graph. */
const topLevelUnit = (() => {
  const pattern = config.options?.reporterOptions?.archi?.collapsePattern;
  if (typeof pattern !== 'string') throw new Error(`${CONFIG_FILE}: options.reporterOptions.archi.collapsePattern is not set`);
  const re = new RegExp(pattern);
  return (module: string) => re.exec(module)?.[0];
})();

/** Cruises `dir`/src with the project's rules, `dir` standing for the repository root. */
async function cruiseSources(dir: string): Promise<ICruiseResult> {
  const { output } = await cruise(['src'], {
    ...config.options,
    baseDir: dir,
    tsConfig: { fileName: path.join(dir, 'tsconfig.json') },
    validate: true,
    ruleSet: { forbidden: config.forbidden ?? [] },
  });
  if (typeof output === 'string') throw new Error(`dependency-cruiser returned a report, not a result: ${output.slice(0, 500)}`);
  return output;
}

/** One line per broken rule: `rule: from → to`, then why each broken rule exists. */
function ruleViolations(result: ICruiseResult): string[] {
  return (result.summary.violations ?? []).map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
}

function reasons(result: ICruiseResult): string[] {
  const broken = new Set((result.summary.violations ?? []).map((v) => v.rule.name));
  return (config.forbidden ?? []).filter((r) => r.name && broken.has(r.name)).map((r) => `  ${r.name}: ${r.comment ?? ''}`);
}

interface ModuleEdge {
  from: string;
  to: string;
}

/**
 * Cycles of the graph whose nodes are top-level units, each with the imports
 * that close it (`rule: from → to (unitA → unitB)`): the strongly connected
 * components with more than one unit (Tarjan).
 */
function topLevelCycles(edges: ModuleEdge[], unitOf: (module: string) => string | undefined): string[] {
  const unitEdges = new Map<string, Map<string, ModuleEdge[]>>();
  for (const edge of edges) {
    const [a, b] = [unitOf(edge.from), unitOf(edge.to)];
    if (!a || !b || a === b) continue;
    const out = unitEdges.get(a) ?? new Map<string, ModuleEdge[]>();
    unitEdges.set(a, out);
    out.set(b, [...(out.get(b) ?? []), edge]);
  }
  const units = [...new Set([...unitEdges.keys(), ...[...unitEdges.values()].flatMap((m) => [...m.keys()])])].sort();

  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (u: string) => {
    index.set(u, index.size);
    low.set(u, index.get(u)!);
    stack.push(u);
    onStack.add(u);
    for (const v of [...(unitEdges.get(u)?.keys() ?? [])].sort()) {
      if (!index.has(v)) {
        visit(v);
        low.set(u, Math.min(low.get(u)!, low.get(v)!));
      } else if (onStack.has(v)) {
        low.set(u, Math.min(low.get(u)!, index.get(v)!));
      }
    }
    if (low.get(u) === index.get(u)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== u);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const u of units) if (!index.has(u)) visit(u);

  const lines: string[] = [];
  for (const component of components) {
    const members = new Set(component);
    lines.push(`${CYCLE_RULE}: ${component.join(' ⇄ ')} depend on each other through`);
    for (const a of component) {
      for (const [b, imports] of [...(unitEdges.get(a) ?? [])].sort(([x], [y]) => x.localeCompare(y))) {
        if (!members.has(b)) continue;
        for (const e of imports.sort((x, y) => `${x.from}${x.to}`.localeCompare(`${y.from}${y.to}`))) {
          lines.push(`    ${e.from} → ${e.to}   (${a} → ${b})`);
        }
      }
    }
  }
  return lines;
}

function moduleEdges(result: ICruiseResult): ModuleEdge[] {
  return result.modules.flatMap((m) => m.dependencies.filter((d) => d.resolved.startsWith('src/')).map((d) => ({ from: m.source, to: d.resolved })));
}

describe('import graph of src/ (rules in .dependency-cruiser.cjs)', () => {
  let result: ICruiseResult;
  beforeAll(async () => {
    result = await cruiseSources(ROOT);
  });

  it('cruises all of src/ with its imports resolved', () => {
    const sources = result.modules.map((m) => m.source).filter((s) => s.startsWith('src/'));
    expect(sources.length).toBeGreaterThan(100);
    const main = result.modules.find((m) => m.source === 'src/cli/main.ts');
    expect(main?.dependencies.some((d) => d.resolved.startsWith('src/'))).toBe(true);
  });

  it('every import respects the layers, runtime/local and nodelet boundaries', () => {
    const lines = ruleViolations(result);
    if (lines.length > 0) {
      expect.fail(
        `${lines.length} import(s) break the rules of ${CONFIG_FILE} (rule: importer → imported):\n` +
          `${lines.map((l) => `  ${l}`).join('\n')}\nwhy these rules:\n${reasons(result).join('\n')}`,
      );
    }
  });

  it("proxy kubectl's fast path loads no parser, process runner, lock, provisioning machinery or gRPC before it works", () => {
    // What `import` loads when the module is evaluated: static imports, not `await import()` and not `import type`.
    const loaded = new Set<string>();
    const visit = (source: string) => {
      if (loaded.has(source)) return;
      loaded.add(source);
      const deps = result.modules.find((m) => m.source === source)?.dependencies ?? [];
      for (const d of deps) if (!d.dynamic && !d.dependencyTypes.includes('type-only')) visit(d.resolved);
    };
    visit('src/cli/commands/proxy-kubectl.ts');
    expect(loaded.has('src/addons/proxy-kubectl.ts')).toBe(true);
    const heavy = [...loaded].filter((m) =>
      /node_modules\/(zod|execa|proper-lockfile|yargs|@grpc)\/|^src\/(config\/parse|provision\/(download|gobuild|lock|index)|ocm\/status)\.ts$/.test(m),
    );
    expect(heavy).toEqual([]);
    // Whether the host reaches the nodes comes from the lab's state.json; the registry (and every runtime's flag
    // table) loads only for a lab brought up before that was recorded, by a dynamic import.
    expect([...loaded].filter((m) => m.startsWith('src/runtime/'))).toEqual([]);
    // A lab file's addons are checked against the registry, provided by src/cli/main.ts and loaded only for a lab file.
    expect([...loaded].filter((m) => m === 'src/addons/registry.ts' || m.endsWith('/builtin.ts'))).toEqual([]);
  });

  it('no cycle between top-level folders of src/', () => {
    const lines = topLevelCycles(moduleEdges(result), topLevelUnit);
    if (lines.length > 0) {
      expect.fail(
        `top-level folders of src/ import each other in a cycle (a lower layer must not need a higher one):\n${lines.map((l) => `  ${l}`).join('\n')}`,
      );
    }
  });
});

/**
 * Declared packages no import names, each with the job it has all the same.
 * Anything else declared and imported nowhere should be dropped from package.json.
 */
const USED_WITHOUT_IMPORT: Record<string, string> = {
  typescript: 'the compiler: npm run build / typecheck',
  '@types/node': 'tsconfig.json compilerOptions.types',
  prettier: 'the formatter: npm run format, checked by npm test (scripts/check-code.sh)',
  eslint: 'the linter: npm run lint (eslint.config.mjs), run by npm test',
  'typescript-eslint': 'imported by eslint.config.mjs (outside the cruised tree)',
  knip: 'the unused-export check: npm run knip (knip.json), run by npm test',
  zx: "js blocks of scenario documents import $, fs, path and YAML from it (src/scenario/execute.ts writes that import, resolved with import.meta.resolve('zx'))",
};

/** `@scope/name/sub/path` → `@scope/name`; `name/sub` → `name`. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

describe('declared dependencies (package.json)', () => {
  it('every declared package is imported by src/, test/ or vitest.config.ts, and every imported package is declared', async () => {
    const pkg = JSON.parse(await fs.readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    const declared = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.devDependencies ?? {})]);
    const { output } = await cruise(['src', 'test', 'vitest.config.ts'], {
      baseDir: ROOT,
      doNotFollow: { path: 'node_modules' },
      tsPreCompilationDeps: true,
      tsConfig: { fileName: path.join(ROOT, 'tsconfig.test.json') },
    });
    if (typeof output === 'string') throw new Error(`dependency-cruiser returned a report, not a result: ${output.slice(0, 500)}`);
    const imported = new Map<string, string>(); // package → one module that imports it
    for (const m of output.modules) {
      if (m.source.startsWith('node_modules/')) continue;
      for (const d of m.dependencies) {
        if (!d.dependencyTypes.some((t) => t.startsWith('npm'))) continue;
        imported.set(packageName(d.module), imported.get(packageName(d.module)) ?? m.source);
      }
    }
    // A package's types (@types/x) are used when x is.
    const used = (name: string) =>
      imported.has(name) || name in USED_WITHOUT_IMPORT || (name.startsWith('@types/') && imported.has(name.slice('@types/'.length)));
    const unused = [...declared].filter((name) => !used(name)).sort();
    const undeclared = [...imported]
      .filter(([name]) => !declared.has(name))
      .map(([name, by]) => `${name} (imported by ${by})`)
      .sort();
    expect({ unused, undeclared }).toEqual({ unused: [], undeclared: [] });

    const execute = await fs.readFile(path.join(ROOT, 'src/scenario/execute.ts'), 'utf8');
    expect(execute, 'zx is kept for the js blocks of scenario documents: execute.ts must still import it for them').toContain("import.meta.resolve('zx')");
  });
});

/** The rules themselves, on a small tree: they catch what they should and let the target structure through. */
describe('the import rules on a sample tree', () => {
  let dir: string;
  const files: Record<string, string> = {
    // allowed in the target structure
    'src/errors.ts': 'export class E extends Error {}\n',
    'src/util/exec.ts': "import { E } from '../errors.js';\nexport const run = () => new E();\n",
    'src/kube/client.ts': "import { run } from '../util/exec.js';\nexport const k = run;\n",
    'src/runtime/types.ts': 'export interface Runtime { name: string }\n',
    'src/runtime/local/runtime.ts':
      "import type { Runtime } from '../types.js';\nimport { node } from '../../nodelet/nodelet.js';\nexport const local: Runtime = { name: node };\n",
    'src/runtime/registry.ts': "import { local } from './local/runtime.js';\nexport const select = () => local;\n",
    'src/runtime/kind/runtime.ts': "import { local } from '../local/runtime.js';\nexport const kind = local;\n",
    'src/nodelet/nodelet.ts': "import { k } from '../kube/client.js';\nexport const node = String(k);\n",
    'src/ocm/install.ts': "import type { Runtime } from '../runtime/types.js';\nexport const install = (r: Runtime) => r.name;\n",
    'src/addons/addon.ts': "import { install } from '../ocm/install.js';\nexport const addon = install;\n",
    'src/lab/lifecycle.ts':
      "import { addon } from '../addons/addon.js';\nimport { select } from '../runtime/registry.js';\nexport const up = () => addon(select());\n",
    'src/cli/commands/internal/nodelet.ts': "import { node } from '../../../nodelet/nodelet.js';\nexport const cmd = node;\n",
    'src/cli/main.ts': "import { up } from '../lab/lifecycle.js';\nexport const main = up;\n",
    'src/bench/lab.ts': "import { local } from '../runtime/local/runtime.js';\nexport const b = local;\n",
    // images/ is shared: a runtime's folder uses its registry
    'src/images/registry/push.ts': "import { run } from '../../util/exec.js';\nexport const push = run;\n",
    'src/runtime/local/registry-use.ts': "import { push } from '../../images/registry/push.js';\nexport const p = push;\n",
    // broken on purpose
    'src/ocm/status.ts': "import { up } from '../lab/lifecycle.js';\nexport const s = up;\n",
    'src/cli/commands/logs.ts': "import { node } from '../../nodelet/nodelet.js';\nexport const l = node;\n",
    'src/scenario/env.ts':
      "import { local } from '../runtime/local/runtime.js';\nimport { select } from '../runtime/registry.js';\nexport const e = [local, select];\n",
    'src/config/load.ts': "import { p } from '../pki/x509.js';\nexport const c = p;\n",
    'src/pki/x509.ts': "import { c } from '../config/load.js';\nexport const p = () => c;\n",
    'src/extra.ts': "import { E } from './errors.js';\nexport const x = E;\n",
    'src/images/registry/names.ts': "import type { Runtime } from '../../runtime/types.js';\nexport type N = Runtime;\n",
  };

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ocm-lab-import-graph-'));
    for (const [file, text] of Object.entries(files)) {
      await fs.mkdir(path.dirname(path.join(dir, file)), { recursive: true });
      await fs.writeFile(path.join(dir, file), text);
    }
    await fs.copyFile(path.join(ROOT, 'tsconfig.json'), path.join(dir, 'tsconfig.json'));
  });
  afterAll(async () => {
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('reports exactly the broken imports, by rule', async () => {
    const sample = await cruiseSources(dir);
    expect(ruleViolations(sample)).toEqual([
      'every-module-in-a-layer: src/extra.ts → src/errors.ts',
      'images-serve-every-runtime: src/images/registry/names.ts → src/runtime/types.ts',
      'nodelet-from-local-runtime-only: src/cli/commands/logs.ts → src/nodelet/nodelet.ts',
      'ocm-below-addons: src/ocm/status.ts → src/lab/lifecycle.ts',
      'runtime-internals-from-registry-only: src/scenario/env.ts → src/runtime/local/runtime.ts',
      'runtime-registry-from-cli-and-lab-only: src/scenario/env.ts → src/runtime/registry.ts',
      'runtimes-stay-apart: src/runtime/kind/runtime.ts → src/runtime/local/runtime.ts',
      'shared-imports-shared-only: src/images/registry/names.ts → src/runtime/types.ts',
    ]);
    expect(topLevelCycles(moduleEdges(sample), topLevelUnit)).toEqual([
      // images/ importing a runtime also closes a loop with the runtime that uses images/.
      `${CYCLE_RULE}: src/images ⇄ src/runtime depend on each other through`,
      '    src/images/registry/names.ts → src/runtime/types.ts   (src/images → src/runtime)',
      '    src/runtime/local/registry-use.ts → src/images/registry/push.ts   (src/runtime → src/images)',
      // ocm/status.ts importing the lifecycle also closes a loop through the addons, which import ocm/install.ts.
      `${CYCLE_RULE}: src/addons ⇄ src/lab ⇄ src/ocm depend on each other through`,
      '    src/addons/addon.ts → src/ocm/install.ts   (src/addons → src/ocm)',
      '    src/lab/lifecycle.ts → src/addons/addon.ts   (src/lab → src/addons)',
      '    src/ocm/status.ts → src/lab/lifecycle.ts   (src/ocm → src/lab)',
      `${CYCLE_RULE}: src/config ⇄ src/pki depend on each other through`,
      '    src/config/load.ts → src/pki/x509.ts   (src/config → src/pki)',
      '    src/pki/x509.ts → src/config/load.ts   (src/pki → src/config)',
    ]);
  });

  it('finds a cycle that no single module closes', () => {
    // a → b and b → c → a through different modules: no module-level cycle, still a folder cycle.
    const edges = [
      { from: 'src/a/1.ts', to: 'src/b/1.ts' },
      { from: 'src/b/2.ts', to: 'src/c/1.ts' },
      { from: 'src/c/2.ts', to: 'src/a/2.ts' },
      { from: 'src/c/2.ts', to: 'src/d/1.ts' },
    ];
    expect(topLevelCycles(edges, topLevelUnit)[0]).toBe(`${CYCLE_RULE}: src/a ⇄ src/b ⇄ src/c depend on each other through`);
  });
});
