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
 * go.mod of the throw-away module that builds a recipe: `go install` refuses
 * modules with replace directives, so we depend on the module instead and
 * replace its staging modules with the published versions.
 */
export function wrapperGoMod(recipe: Recipe, upstreamGoMod: string, goVersion: string): string {
  const lines = [`module ocm-lab.local/build/${recipe.id}`, '', `go ${goVersion}`, '', `require ${recipe.module} ${recipe.version}`];
  if (recipe.stagingVersion) {
    const staging = stagingModules(upstreamGoMod);
    if (staging.length) {
      lines.push('', 'replace (');
      for (const mod of staging) lines.push(`\t${mod} => ${mod} ${recipe.stagingVersion}`);
      lines.push(')');
    }
  }
  return `${lines.join('\n')}\n`;
}

export function goDirective(upstreamGoMod: string): string {
  return /^go\s+(\S+)/m.exec(upstreamGoMod)?.[1] ?? '1.24.0';
}
