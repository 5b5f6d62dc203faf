export * from './types.js';
export { parseScenario } from './parse.js';
export { checkExpectation } from './expect.js';
export { describeFailure, missingRequirement, runScenario, runStep, type RunEvents } from './run.js';
export { junitXml, transcriptHtml, transcriptMarkdown, writeTranscripts } from './report.js';
export { DEFAULT_SCENARIO_DIR, listScenarios, selectScenarios } from './library.js';
export { resolveScenarioEnvironment, type ScenarioEnvironment } from './environment.js';
export { runConformance, type ConformanceOptions, type ConformanceResult } from './conformance.js';
