import type { Recipe } from './recipes.js';

/** The staging modules an upstream go.mod requires at v0.0.0 (k8s.io/kubernetes replaces them with local paths). */
export function stagingModules(upstreamGoMod: string): string[] {
  const found = new Set<string>();
  for (const line of upstreamGoMod.split('\n')) {
    const m = /^\s*(?:require\s+)?(k8s\.io\/[\w.-]+)\s+v0\.0\.0\s*(?:\/\/.*)?$/.exec(line);
    if (m) found.add(m[1] as string);
  }
  return [...found].sort();
}

/**
 * The upstream go.mod's `replace` directives whose target is a module at a version
 * (`old [v] => new v`), as go.mod lines; replacements by a local directory cannot be kept.
 */
export function versionReplaces(upstreamGoMod: string): string[] {
  const found: string[] = [];
  let inBlock = false;
  for (const raw of upstreamGoMod.split('\n')) {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (inBlock && line === ')') {
      inBlock = false;
      continue;
    }
    if (/^replace\s*\($/.test(line)) {
      inBlock = true;
      continue;
    }
    const body = inBlock ? line : /^replace\s+(.*)$/.exec(line)?.[1];
    const m = body ? /^(\S+)(?:\s+(\S+))?\s+=>\s+(\S+)\s+(v\S+)$/.exec(body) : null;
    if (m) found.push(`${m[1]}${m[2] ? ` ${m[2]}` : ''} => ${m[3]} ${m[4]}`);
  }
  return found;
}

/**
 * go.mod of the throw-away module that builds a recipe: `go install` refuses
 * modules with replace directives, so we depend on the module instead and
 * replace its staging modules with the published versions.
 */
export function wrapperGoMod(recipe: Recipe, upstreamGoMod: string, goVersion: string): string {
  const lines = [`module ocm-lab.local/build/${recipe.id}`, '', `go ${goVersion}`, '', `require ${recipe.module} ${recipe.version}`];
  const replaces: string[] = [];
  if (recipe.stagingVersion) for (const mod of stagingModules(upstreamGoMod)) replaces.push(`${mod} => ${mod} ${recipe.stagingVersion}`);
  if (recipe.keepUpstreamReplaces) replaces.push(...versionReplaces(upstreamGoMod));
  if (replaces.length) lines.push('', 'replace (', ...replaces.map((r) => `\t${r}`), ')');
  return `${lines.join('\n')}\n`;
}

export function goDirective(upstreamGoMod: string): string {
  return /^go\s+(\S+)/m.exec(upstreamGoMod)?.[1] ?? '1.24.0';
}
