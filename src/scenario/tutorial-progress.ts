import fs from 'node:fs/promises';
import path from 'node:path';
import { tutorialDir } from '../paths.js';
import type { Scenario } from './types.js';

/** How a step ended the last time the reader ran or skipped it. */
export type StepMark = 'passed' | 'failed' | 'skipped';

/** A reader's place in one document on one lab: `<labs>/.tutorials/<lab>/<document>/progress.json`. */
export interface TutorialProgress {
  document: string;
  lab: string;
  /** The step to show next (0-based); equal to the number of steps once the document is done. */
  next: number;
  /** Per step, its last outcome (null: not reached yet). */
  marks: (StepMark | null)[];
  updatedAt: string;
}

/** The files of one reader's walk through a document: progress and the blocks' shared working directory. */
export interface TutorialPlace {
  dir: string;
  progressFile: string;
  workDir: string;
}

export function tutorialPlace(lab: string, scenario: Pick<Scenario, 'name'>, env: NodeJS.ProcessEnv = process.env): TutorialPlace {
  const dir = tutorialDir(lab, scenario.name, env);
  return { dir, progressFile: path.join(dir, 'progress.json'), workDir: path.join(dir, 'work') };
}

/** The saved progress, or null when there is none or it is for a document with another number of steps (edited since). */
export async function readProgress(place: TutorialPlace, scenario: Pick<Scenario, 'steps'>): Promise<TutorialProgress | null> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await fs.readFile(place.progressFile, 'utf8'));
  } catch {
    return null;
  }
  const p = parsed as Partial<TutorialProgress> | null;
  if (!p || typeof p.next !== 'number' || !Array.isArray(p.marks) || p.marks.length !== scenario.steps.length) return null;
  if (!Number.isInteger(p.next) || p.next < 0 || p.next > scenario.steps.length) return null;
  return p as TutorialProgress;
}

export async function writeProgress(place: TutorialPlace, progress: TutorialProgress): Promise<void> {
  await fs.mkdir(place.dir, { recursive: true });
  const tmp = `${place.progressFile}.tmp`;
  await fs.writeFile(tmp, `${JSON.stringify(progress, null, 2)}\n`);
  await fs.rename(tmp, place.progressFile);
}

/** A fresh start: no progress, an empty working directory (variables exported by an earlier walk are gone). */
export async function resetPlace(place: TutorialPlace): Promise<void> {
  await fs.rm(place.dir, { recursive: true, force: true });
  await fs.mkdir(place.workDir, { recursive: true });
}
