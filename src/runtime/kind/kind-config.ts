import fs from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** The templates folder shipped with the package (`files` in package.json lists it). */
const KIND_CONFIG_DIR = fileURLToPath(new URL('../../../kind-configs/', import.meta.url));

type KindTemplateName = 'hub' | 'spoke';
export type KindTemplates = Record<KindTemplateName, string>;

export async function readKindTemplates(dir: string = KIND_CONFIG_DIR): Promise<KindTemplates> {
  const [hub, spoke] = await Promise.all([fs.readFile(`${dir}/hub.yaml`, 'utf8'), fs.readFile(`${dir}/spoke.yaml`, 'utf8')]);
  return { hub, spoke };
}

const PLACEHOLDER = /\{\{\s*([A-Za-z][A-Za-z0-9]*)\s*\}\}/g;

/**
 * A template with every `{{name}}` replaced and its comment header dropped (the
 * header documents the template, not the lab). A placeholder without a value is
 * an error: a half-rendered config would reach kind.
 */
export function renderKindConfig(template: string, values: Readonly<Record<string, string>>): string {
  const missing = new Set<string>();
  const body = template.replace(PLACEHOLDER, (_, name: string) => {
    const value = values[name];
    if (value === undefined) {
      missing.add(name);
      return '';
    }
    return value;
  });
  if (missing.size)
    throw new Error(
      `kind config template uses ${[...missing].map((m) => `{{${m}}}`).join(', ')}, ` +
        `which ocm-lab does not provide (it provides: ${Object.keys(values).join(', ')})`,
    );
  const lines = body.split('\n');
  let start = 0;
  while (start < lines.length && (lines[start]!.startsWith('#') || lines[start]!.trim() === '')) start++;
  return `${lines.slice(start).join('\n').trimEnd()}\n`;
}
