/**
 * Node module hooks for addon code: `ocm-lab` and `ocm-lab/*` resolve to this very package
 * (so a bundle in a ConfigMap mount, far from any node_modules, uses our image's copy), and
 * `.ts` files load through esbuild's transform (so an addon project's tests run on plain Node 20).
 * Registered by `internal run-addon` and by `node --import ocm-lab/addon-framework/register`.
 */
import fs from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

type Resolve = (
  specifier: string,
  context: { parentURL?: string; conditions?: string[] },
) => Promise<{ url: string; format?: string | null; shortCircuit?: boolean }>;
type Load = (url: string, context: { format?: string | null }) => Promise<{ format: string; source?: string | Buffer | null; shortCircuit?: boolean }>;

export async function resolve(specifier: string, context: { parentURL?: string; conditions?: string[] }, next: Resolve) {
  if (specifier === 'ocm-lab' || specifier.startsWith('ocm-lab/')) {
    // A package may import itself by name (its "exports"); resolving from here does exactly that.
    return next(specifier, { ...context, parentURL: import.meta.url });
  }
  try {
    return await next(specifier, context);
  } catch (err) {
    // TypeScript sources import `./x.js` for the file `./x.ts`.
    if (context.parentURL?.endsWith('.ts') && specifier.startsWith('.') && specifier.endsWith('.js')) {
      return next(`${specifier.slice(0, -3)}.ts`, context);
    }
    throw err;
  }
}

export async function load(url: string, context: { format?: string | null }, next: Load) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  const { transform } = await import('esbuild');
  const file = fileURLToPath(url);
  const out = await transform(await fs.readFile(file, 'utf8'), { loader: 'ts', format: 'esm', target: 'node20', sourcefile: file, sourcemap: 'inline' });
  return { format: 'module', source: out.code, shortCircuit: true };
}
