import { startDockerEngine } from '../support/docker-engine.js';
import { describeDefaultKindLab } from '../support/kind-lab-cases.js';

// The default lab on kind, on Debian's Docker engine started by the test (test/support/kind-lab-cases.ts).
describeDefaultKindLab('docker', {
  start: async () => ({ name: 'docker', ...(await startDockerEngine()) }),
  engineLine: /engine: docker \d+\.\d+/,
});
