import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvalidInputError } from '../../errors.js';
import { validateAddonName } from './names.js';
import { PACKAGE_VERSION } from '../../version.js';

/** The ocm-lab package (dist/addons/dev/ → three levels up), which holds templates/addon/. */
const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TEMPLATE_DIR = path.join(PACKAGE_ROOT, 'templates', 'addon');
const PLACEHOLDER = /__NAME__/g;
const REPOSITORY_PLACEHOLDER = /__OCM_LAB_REPOSITORY__/g;
const REF_PLACEHOLDER = /__OCM_LAB_REF__/g;
const IMAGE_PLACEHOLDER = /__OCM_LAB_IMAGE__/g;

/** The repository of the ocm-lab action (action.yml at its root, down/action.yml beside). */
const OCM_LAB_ACTION_REPOSITORY = 'ocm-lab/ocm-lab';
/** ocm-lab's image as its release workflow publishes it (ghcr.io/<owner>/ocm-lab:<version>): what the addon's image is built FROM. */
export const PUBLISHED_OCM_LAB_IMAGE = `ghcr.io/${OCM_LAB_ACTION_REPOSITORY}:${PACKAGE_VERSION}`;

export interface ProjectFile {
  /** Relative to the project. */
  path: string;
  content: string;
}

/** Every template file, placeholder replaced in its path and content, in a stable order. */
export async function projectFiles(name: string, templateDir = TEMPLATE_DIR): Promise<ProjectFile[]> {
  validateAddonName(name);
  const out: ProjectFile[] = [];
  // The action's tag: the version that wrote the project.
  const ref = `v${PACKAGE_VERSION}`;
  const fill = (text: string) =>
    text
      .replace(PLACEHOLDER, name)
      .replace(REPOSITORY_PLACEHOLDER, OCM_LAB_ACTION_REPOSITORY)
      .replace(REF_PLACEHOLDER, ref)
      .replace(IMAGE_PLACEHOLDER, PUBLISHED_OCM_LAB_IMAGE);
  const walk = async (rel: string) => {
    for (const entry of (await fs.readdir(path.join(templateDir, rel), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const child = path.join(rel, entry.name);
      if (entry.isDirectory()) await walk(child);
      else out.push({ path: child.replace(PLACEHOLDER, name), content: fill(await fs.readFile(path.join(templateDir, child), 'utf8')) });
    }
  };
  await walk('');
  return out;
}

async function isEmptyOrMissing(dir: string): Promise<boolean> {
  try {
    return (await fs.readdir(dir)).length === 0;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') return false;
    throw err;
  }
}

/**
 * Writes a new addon project into `dir` (missing or empty). Everything is written into a
 * sibling temporary folder first and renamed into place, so a failure leaves no half project.
 * `node_modules/ocm-lab` links to this ocm-lab, so the project's imports and test resolve
 * without an install.
 */
export async function writeProject(name: string, dir: string, options: { packageRoot?: string } = {}): Promise<{ dir: string; files: string[] }> {
  validateAddonName(name);
  const target = path.resolve(dir);
  if (!(await isEmptyOrMissing(target))) {
    throw new InvalidInputError(`${target} exists and is not empty: addon new writes a new project only`, { hint: 'name a new folder, or empty that one' });
  }
  const files = await projectFiles(name);
  await fs.mkdir(path.dirname(target), { recursive: true });
  const staging = await fs.mkdtemp(path.join(path.dirname(target), `.${path.basename(target)}.new-`));
  try {
    for (const f of files) {
      await fs.mkdir(path.dirname(path.join(staging, f.path)), { recursive: true });
      await fs.writeFile(path.join(staging, f.path), f.content);
    }
    await fs.chmod(staging, 0o755);
    await fs.mkdir(path.join(staging, 'node_modules'));
    await fs.symlink(options.packageRoot ?? PACKAGE_ROOT, path.join(staging, 'node_modules', 'ocm-lab'), 'dir');
    await fs.rmdir(target).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    await fs.rename(staging, target);
  } catch (err) {
    await fs.rm(staging, { recursive: true, force: true });
    throw err;
  }
  return { dir: target, files: files.map((f) => f.path) };
}
