export type ExpectationKind = 'contains' | 'matches' | 'row' | 'fails';
export const EXPECTATION_KINDS: ExpectationKind[] = ['contains', 'matches', 'row', 'fails'];

export interface Expectation {
  kind: ExpectationKind;
  /** The block's text: a substring, a regular expression, a row of cells, or the failure message. */
  text: string;
  line: number;
}

/** A code block the runner executes, with what its output must show. */
export interface Step {
  language: 'sh' | 'js';
  code: string;
  /** Line of the opening fence in the document (1-based). */
  line: number;
  timeoutSeconds: number;
  cleanup: boolean;
  expectations: Expectation[];
}

export interface ScenarioRequirements {
  clusters: string[];
  addons: string[];
  /** Lab capabilities (from `ocm-lab status`), e.g. vpc-isolation, ocm. */
  capabilities: string[];
}

export interface Scenario {
  name: string;
  file: string;
  title: string;
  summary: string;
  requires: ScenarioRequirements;
  steps: Step[];
  /** The document's lines, for transcripts. */
  lines: string[];
}

export type StepStatus = 'passed' | 'failed' | 'not-run';

export interface StepResult {
  step: Step;
  status: StepStatus;
  exitCode: number | null;
  output: string;
  durationMs: number;
  /** Why it failed: the expectation and what came out instead. */
  failure?: string;
}

export interface ScenarioResult {
  name: string;
  title: string;
  status: 'passed' | 'failed' | 'skipped';
  skipReason?: string;
  durationMs: number;
  steps: StepResult[];
}
