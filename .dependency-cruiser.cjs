/**
 * Import rules of src/ (issue 11): a runtime only provides clusters; everything
 * after it talks to clusters through the Kubernetes API. Checked by
 * test/unit/import-graph.test.ts; by hand: `npx depcruise src --config .dependency-cruiser.cjs`.
 *
 * Layers, each importing only from layers to its left (and from itself):
 *   shared leaves ← nodelet ← runtime ← ocm ← addons ← lab ← scenario ← cli ← bench
 *
 * The remaining rule, "no cycle between top-level folders of src/", is not
 * expressible per dependency (dependency-cruiser's folder-scope cycles work on
 * every folder depth, not on top-level folders): the test derives it from this
 * cruise's resolved graph, collapsed as options.reporterOptions.archi says.
 *
 * Type-only imports count: they couple the layers just the same.
 */

/** Folders and files every layer may use; they import only each other. */
const SHARED = '^src/(kube|config|pki|provision|util|tunnel|images|host)/|^src/(errors|paths|version)\\.ts$';
const NODELET = '^src/nodelet/';
const RUNTIME = '^src/runtime/';
const OCM = '^src/ocm/';
const LAB = '^src/lab/';
const ADDONS = '^src/addons/';
const SCENARIO = '^src/scenario/';
const CLI = '^src/cli/';
const BENCH = '^src/bench/';
const RUNTIME_LOCAL = '^src/runtime/local/';
/** Any one runtime's folder (src/runtime/<name>/). */
const RUNTIME_ONE = '^src/runtime/[^/]+/';
const RUNTIME_REGISTRY = '^src/runtime/registry\\.ts$';

/** One layer: its modules may import only `allowed` (and anything outside src/). */
function layer(name, from, allowed, comment) {
  return { name, comment, severity: 'error', from: { path: from }, to: { path: '^src/', pathNot: allowed } };
}

module.exports = {
  forbidden: [
    layer(
      'shared-imports-shared-only',
      SHARED,
      [SHARED],
      'kube, config, pki, provision, util, tunnel, images, host and errors/paths/version.ts are used by every layer: importing a layer would tie them to it',
    ),
    layer(
      'nodelet-imports-shared-only',
      NODELET,
      [SHARED, NODELET],
      "the nodelet is the local runtime's node: it gets its cluster through the API and flags, and must not pull the runtime or OCM in",
    ),
    layer(
      'runtime-below-ocm',
      RUNTIME,
      [SHARED, NODELET, RUNTIME],
      'a runtime only provides clusters: it knows nothing of OCM, the lab lifecycle, addons or scenarios',
    ),
    layer(
      'ocm-below-addons',
      OCM,
      [SHARED, RUNTIME, OCM],
      'OCM is installed through the Kubernetes API on any runtime: it may use runtime types, not the addons or the lifecycle above it',
    ),
    layer(
      'addons-below-lab',
      ADDONS,
      [SHARED, RUNTIME, OCM, ADDONS],
      'addons are installed on top of OCM through the API; they know nothing of the lifecycle that runs them',
    ),
    layer(
      'lab-below-scenario',
      LAB,
      [SHARED, RUNTIME, OCM, ADDONS, LAB],
      'the lifecycle composes a runtime, the OCM install and the addons into up/down/status; scenarios and the CLI use it',
    ),
    layer(
      'scenario-below-cli',
      SCENARIO,
      [SHARED, RUNTIME, OCM, LAB, ADDONS, SCENARIO],
      'scenarios exercise a lab through the layers below; only the CLI runs them',
    ),
    layer('cli-below-bench', CLI, [SHARED, NODELET, RUNTIME, OCM, LAB, ADDONS, SCENARIO, CLI], 'the CLI is the composition root; only benchmarks sit above it'),
    {
      name: 'runtime-internals-from-registry-only',
      comment:
        "a runtime is its folder and its line in runtime/registry.ts: nothing else imports a runtime's internals, so adding one touches nothing else. " +
        "Exceptions: a runtime's own programs run in its nodes as `ocm-lab internal …` (cli/commands/internal/), and benchmarks",
      severity: 'error',
      from: { pathNot: [RUNTIME_ONE, RUNTIME_REGISTRY, '^src/cli/commands/internal/', BENCH] },
      to: { path: RUNTIME_ONE },
    },
    {
      name: 'builtin-addons-from-registry-only',
      comment:
        "a built-in addon is its folder and its line in addons/registry.ts: the generic addon code (src/addons/*.ts) reads each addon's definition " +
        "(its builtin.ts) through the registry instead of importing the addon, so adding one touches nothing else. The framework, upstream's " +
        "builds and addon development are shared folders, not addons. Exceptions: proxy-kubectl.ts and hub-client.ts, cluster-proxy's tunnel as " +
        'the CLI uses it',
      severity: 'error',
      from: { path: '^src/addons/[^/]+\\.ts$', pathNot: ['^src/addons/registry\\.ts$', '^src/addons/proxy-kubectl\\.ts$', '^src/addons/hub-client\\.ts$'] },
      to: { path: '^src/addons/[^/]+/', pathNot: '^src/addons/(framework|upstream|dev)/' },
    },
    {
      name: 'images-serve-every-runtime',
      comment:
        "src/images/ (the catalogue, Docker builds, the lab's image registry, the clusters' image check) is what every runtime shares: " +
        "a runtime's folder imports it, it imports no runtime (neither a runtime's folder nor src/runtime/*.ts) and not the nodelet, " +
        "so a Podman or nerdctl runtime can use the registry without kind's internals",
      severity: 'error',
      from: { path: '^src/images/' },
      to: { path: [RUNTIME, NODELET] },
    },
    {
      name: 'runtimes-stay-apart',
      comment:
        'one runtime does not import another: what two runtimes share lives in src/runtime/*.ts (the base) or in a shared layer ' +
        '(images and their registry: src/images/)',
      severity: 'error',
      from: { path: '^src/runtime/([^/]+)/' },
      to: { path: RUNTIME_ONE, pathNot: '^src/runtime/$1/' },
    },
    {
      name: 'runtime-registry-from-cli-and-lab-only',
      comment: 'only the lifecycle and the CLI pick the runtime via registry.ts; OCM, addons and scenarios get clusters, so they run on every runtime',
      severity: 'error',
      from: { pathNot: [CLI, BENCH, RUNTIME, LAB] },
      to: { path: RUNTIME_REGISTRY },
    },
    {
      name: 'nodelet-from-local-runtime-only',
      comment:
        "the nodelet is part of the local runtime's nodes: the local runtime starts it, `internal nodelet` runs it; other code reads pods through the API",
      severity: 'error',
      from: { pathNot: [NODELET, RUNTIME_LOCAL, '^src/cli/commands/internal/', BENCH] },
      to: { path: NODELET },
    },
    {
      name: 'nothing-imports-bench',
      comment: 'benchmarks may import anything, so nothing may import them (that would be a cycle through the top)',
      severity: 'error',
      from: { pathNot: BENCH },
      to: { path: BENCH },
    },
    {
      name: 'every-module-in-a-layer',
      comment: 'a new top-level folder or src/*.ts file must be given a place in the layers above, or no rule would check it',
      severity: 'error',
      from: { path: '^src/', pathNot: [SHARED, NODELET, RUNTIME, OCM, LAB, ADDONS, SCENARIO, CLI, BENCH] },
      to: {},
    },
    {
      name: 'not-to-dev-dep',
      comment: 'dist/ runs where only dependencies are installed (npm install -g, npx): src/ must not need a devDependency at run time',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'], pathNot: 'node_modules/@types/' },
    },
    {
      name: 'no-undeclared-package',
      comment: "a package src/ imports must be declared in package.json, not found by chance as some other package's dependency",
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'resolvable',
      comment: 'an import the cruise cannot resolve would drop its edge, and with it any violation it carries',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    reporterOptions: {
      // A top-level folder of src/ (or a src/*.ts file) as one node: the graph the cycle check
      // works on, and what `npx depcruise src --config .dependency-cruiser.cjs -T archi` draws.
      archi: { collapsePattern: '^src/[^/]+' },
    },
  },
};
