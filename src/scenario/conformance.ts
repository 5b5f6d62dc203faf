import fs from 'node:fs/promises';
import path from 'node:path';
import type { LabConfig } from '../config/index.js';
import { MissingPrerequisiteError } from '../errors.js';
import { resolveScenarioEnvironment, type ScenarioEnvironment } from './environment.js';
import { junitXml } from './junit.js';
import { DEFAULT_SCENARIO_DIR, filterScenarios, listScenarios, pickScenarios } from './library.js';
import { runScenarios, type RunScenariosOptions, type RunSummary } from './progress.js';
import { missingRequirement } from './run.js';

export interface ConformanceOptions extends RunScenariosOptions {
  /** Folder of documents (default: the repository's scenarios/). */
  dir?: string;
  /** Only documents whose name matches this regular expression. */
  only?: string;
  /** These documents, in this order (default: all). */
  names?: string[];
  /** Refuse, before anything runs, when the lab cannot run one of the chosen documents (`scenario run`); otherwise they are skipped. */
  requireAll?: boolean;
  /** Write JUnit XML here. */
  junitFile?: string;
  /** An environment already resolved (else resolved from the lab, and disposed after). */
  environment?: ScenarioEnvironment;
}

export type ConformanceResult = RunSummary;

/**
 * Runs documents against a running lab: every one (`conformance`) or the
 * named ones (`scenario run`). Every document is parsed before any runs.
 */
export async function runConformance(config: LabConfig, options: ConformanceOptions = {}): Promise<ConformanceResult> {
  const all = await listScenarios(options.dir ?? DEFAULT_SCENARIO_DIR);
  let chosen = options.names?.length ? pickScenarios(all, options.names) : all;
  if (options.only) chosen = filterScenarios(chosen, options.only);
  const environment = options.environment ?? (await resolveScenarioEnvironment(config));
  try {
    if (options.requireAll) {
      const refused = chosen.map((s) => [s.name, missingRequirement(s, environment)] as const).filter(([, why]) => why);
      if (refused.length) {
        throw new MissingPrerequisiteError(`lab '${environment.labName}' cannot run ${refused.map(([name, why]) => `${name} (${why})`).join('; ')}`, {
          hint:
            `the lab reports capabilities [${environment.capabilities.join(', ')}], clusters [${environment.clusters.join(', ')}], ` +
            `addons [${environment.addons.join(', ')}]; nothing was run`,
        });
      }
    }
    const summary = await runScenarios(chosen, environment, options);
    if (options.junitFile) {
      await fs.mkdir(path.dirname(path.resolve(options.junitFile)), { recursive: true });
      await fs.writeFile(options.junitFile, junitXml(summary.results));
    }
    return summary;
  } finally {
    if (!options.environment) await environment.dispose?.();
  }
}
