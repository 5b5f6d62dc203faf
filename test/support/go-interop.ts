// Interop helpers live next to the benchmark (src/bench/tunnel-upstream.ts), which needs them too.
export {
  buildUpstreamTunnel,
  freePort,
  spawnBinary,
  upstreamAgentArgs,
  upstreamServerArgs,
  type Spawned,
  type UpstreamTunnel,
} from '../../src/bench/tunnel-upstream.js';
