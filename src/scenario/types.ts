export type ExpectationKind = 'contains' | 'matches' | 'row' | 'fails';
export const EXPECTATION_KINDS: readonly ExpectationKind[] = ['contains', 'matches', 'row', 'fails'];

/**
 * What a lab can report in `ocm-lab status -o json` → `capabilities`, and so
 * what a document may require. A name outside this list is a typo that would
 * skip the document forever, so the parser rejects it.
 */
export const KNOWN_CAPABILITIES = ['control-plane', 'vpc-isolation', 'ocm', 'pods', 'cluster-profile', 'manifestworkreplicaset', 'local-cluster'] as const;

export interface Expectation {
  kind: ExpectationKind;
  /** The block's text: a substring, a regular expression, table rows, or the failure message (may be empty). */
  text: string;
  /** Lines of the opening and closing fence (1-based). */
  line: number;
  endLine: number;
}

/** A code block the runner executes, with what its output must show. */
export interface Step {
  language: 'sh' | 'js';
  code: string;
  /** Line of the opening fence (1-based). */
  line: number;
  /** Line of the closing fence (1-based). */
  endLine: number;
  /** Leading spaces of the fence (blocks inside list items are indented). */
  indent: string;
  timeoutSeconds: number;
  /** Runs at the end of the document even after a failure. */
  cleanup: boolean;
  expectations: Expectation[];
}

interface ScenarioRequirements {
  clusters: string[];
  addons: string[];
  capabilities: string[];
}

export interface Scenario {
  /** The file name without `.md`. */
  name: string;
  file: string;
  title: string;
  summary: string;
  requires: ScenarioRequirements;
  steps: Step[];
  /** The document's lines, for transcripts. */
  lines: string[];
}

type StepStatus = 'passed' | 'failed' | 'not-run';

export interface StepResult {
  step: Step;
  status: StepStatus;
  /** Null when the block did not exit by itself (timed out, interrupted, could not start). */
  exitCode: number | null;
  /** Combined stdout and stderr. */
  output: string;
  durationMs: number;
  /** Why it failed: the expectation that did not hold, or the timeout. */
  failure?: string;
  /** The expectation that did not hold (none when the exit status, a timeout or an interruption decided). */
  failedExpectation?: Expectation;
}

type ScenarioStatus = 'passed' | 'failed' | 'skipped';

export interface ScenarioResult {
  name: string;
  title: string;
  status: ScenarioStatus;
  /** Why the lab cannot run the document (status 'skipped'). */
  skipReason?: string;
  durationMs: number;
  steps: StepResult[];
}
