import fs from 'node:fs/promises';
import type { LabConfig } from '../config/index.js';
import { junitXml, writeTranscripts } from './report.js';
import { resolveScenarioEnvironment } from './environment.js';
import { DEFAULT_SCENARIO_DIR, listScenarios } from './library.js';
import { runScenario, type RunEvents } from './run.js';
import type { Scenario, ScenarioResult } from './types.js';

export interface ConformanceOptions extends RunEvents {
  dir?: string;
  /** Only scenarios whose name matches this regular expression. */
  only?: string;
  /** Names to run, in this order (all when empty). */
  names?: string[];
  keepGoing?: boolean;
  transcriptDir?: string;
  junitFile?: string;
  onScenario?: (scenario: Scenario) => void;
  onScenarioDone?: (scenario: Scenario, result: ScenarioResult) => void;
}

export interface ConformanceResult {
  lab: string;
  passed: number;
  failed: number;
  skipped: number;
  results: { scenario: Scenario; result: ScenarioResult }[];
}

/** Runs documents against a running lab: every one (conformance) or the named ones (scenario run). */
export async function runConformance(config: LabConfig, opts: ConformanceOptions = {}): Promise<ConformanceResult> {
  const all = await listScenarios(opts.dir ?? DEFAULT_SCENARIO_DIR);
  const pattern = opts.only ? new RegExp(opts.only) : null;
  const selected = opts.names?.length
    ? opts.names.map((n) => all.find((s) => s.name === n)).filter((s): s is Scenario => !!s)
    : all.filter((s) => !pattern || pattern.test(s.name));
  const env = await resolveScenarioEnvironment(config);
  const results: ConformanceResult['results'] = [];
  try {
    for (const scenario of selected) {
      opts.onScenario?.(scenario);
      const result = await runScenario(scenario, env, opts);
      results.push({ scenario, result });
      opts.onScenarioDone?.(scenario, result);
      if (opts.transcriptDir && result.status !== 'skipped') await writeTranscripts(opts.transcriptDir, scenario, result);
      if (result.status === 'failed' && opts.keepGoing === false) break;
    }
  } finally {
    await env.dispose();
  }
  if (opts.junitFile) await fs.writeFile(opts.junitFile, junitXml(results));
  const count = (s: ScenarioResult['status']) => results.filter((r) => r.result.status === s).length;
  return { lab: config.name, passed: count('passed'), failed: count('failed'), skipped: count('skipped'), results };
}
