import { InvalidInputError, LabError, MissingPrerequisiteError } from '../errors.js';
import { outboundFetch, proxyFor } from '../util/outbound-proxy.js';
import { downloadUrl, registryBase, type Mirrors } from './mirrors.js';
import { DOCKER_HUB, DOCKER_HUB_ENDPOINT } from './oci/reference.js';

/**
 * Where a lab's binaries and images come from: `official` = the projects' own downloads and images only,
 * `build` = built here (Go, debootstrap), `auto` = official first, building what cannot be fetched.
 */
export type ArtifactsMode = 'official' | 'build' | 'auto';
export const ARTIFACT_MODES = ['official', 'build', 'auto'] as const satisfies readonly ArtifactsMode[];

/** The mode and what chose it, in the words the user typed (`--artifacts build`, `OCM_LAB_NO_DOWNLOAD=1`, …). */
export interface ArtifactsChoice {
  mode: ArtifactsMode;
  origin: string;
}

function isMode(value: string): value is ArtifactsMode {
  return (ARTIFACT_MODES as readonly string[]).includes(value);
}

/**
 * Precedence: flag > environment > lab file > `auto`. `--no-download` and `OCM_LAB_NO_DOWNLOAD=1` are the
 * older spellings of `build` (and `--download` of `auto`), each at its own level; `--artifacts` and
 * $OCM_LAB_ARTIFACTS win over them.
 */
export function chooseArtifacts(input: {
  flag?: string;
  /** The older `--download` / `--no-download`, when given. */
  download?: boolean;
  env?: NodeJS.ProcessEnv;
  labFile?: ArtifactsMode;
}): ArtifactsChoice {
  const env = input.env ?? process.env;
  if (input.flag !== undefined) {
    if (!isMode(input.flag)) throw new InvalidInputError(`--artifacts ${input.flag}: not a choice; use one of ${ARTIFACT_MODES.join(', ')}`);
    return { mode: input.flag, origin: `--artifacts ${input.flag}` };
  }
  if (input.download !== undefined) return input.download ? { mode: 'auto', origin: '--download' } : { mode: 'build', origin: '--no-download' };
  const fromEnv = env.OCM_LAB_ARTIFACTS;
  if (fromEnv) {
    if (!isMode(fromEnv)) {
      throw new InvalidInputError(`OCM_LAB_ARTIFACTS=${fromEnv}: not a choice; use one of ${ARTIFACT_MODES.join(', ')}`, {
        hint: 'set OCM_LAB_ARTIFACTS to official, build or auto, or unset it',
      });
    }
    return { mode: fromEnv, origin: `OCM_LAB_ARTIFACTS=${fromEnv}` };
  }
  if (env.OCM_LAB_NO_DOWNLOAD === '1') return { mode: 'build', origin: 'OCM_LAB_NO_DOWNLOAD=1' };
  if (input.labFile) return { mode: input.labFile, origin: `artifacts: ${input.labFile} in the lab file` };
  return { mode: 'auto', origin: 'default' };
}

/** The mode provisioning uses when nobody decided before it (library callers, tests): the environment's, else `auto`. */
export function artifactsFromEnv(env: NodeJS.ProcessEnv = process.env): ArtifactsMode {
  return chooseArtifacts({ env }).mode;
}

/** A publisher the lab fetches from: a registry (probed at `/v2/`) or a download host (probed at its prefix). */
export interface OfficialSource {
  host: string;
  kind: 'registry' | 'download';
  /** The registry host, or the URL prefix of the downloads (both rewritten by the mirrors). */
  at: string;
}

/**
 * The publishers labs fetch from: Kubernetes binaries from dl.k8s.io, etcd and kind from GitHub's release
 * downloads, OCM's images from quay.io, kind's node image and the Node.js base from Docker Hub. Each
 * runtime's definition lists the ones its labs need.
 */
export const PUBLISHERS = {
  dlK8s: { host: 'dl.k8s.io', kind: 'download', at: 'https://dl.k8s.io/release' },
  github: { host: 'github.com', kind: 'download', at: 'https://github.com' },
  quay: { host: 'quay.io', kind: 'registry', at: 'quay.io' },
  dockerHub: { host: DOCKER_HUB_ENDPOINT, kind: 'registry', at: DOCKER_HUB },
} as const satisfies Record<string, OfficialSource>;

/** The URL a probe asks: the distribution API's root for a registry, the (mirrored) prefix for downloads. */
export function probeUrl(source: OfficialSource, mirrors: Mirrors): string {
  return source.kind === 'registry' ? `${registryBase(mirrors, source.at)}/v2/` : `${downloadUrl(mirrors, source.at)}/`;
}

interface ProbeResult {
  source: OfficialSource;
  url: string;
  /** Why it does not count as answering (no answer in time, refused, a 5xx); absent when it answered. */
  problem?: string;
}

export type Prober = (url: string, timeoutMs: number) => Promise<string | undefined>;

/** How long the probe gives each publisher; they are asked at once, so this bounds the whole decision. */
const PROBE_TIMEOUT_MS = 3_000;

/**
 * Any HTTP answer below 500 counts (a registry's /v2/ answers 401 without credentials): the host is there. Asked through
 * the environment's proxy when one applies; a proxy that refuses (ProxyError, exit 9) or a proxy variable that does not
 * parse (exit 2) is thrown, not counted as a silent publisher: building instead would hide it.
 */
export const httpProber: Prober = async (url, timeoutMs) => {
  try {
    const res = await outboundFetch(url, { method: 'GET', redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel().catch(() => undefined);
    return res.status >= 500 ? `HTTP ${res.status}` : undefined;
  } catch (err) {
    if (err instanceof LabError) throw err;
    const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return `no answer within ${timeoutMs / 1000} s`;
    return e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
  }
};

async function probeOfficialSources(sources: readonly OfficialSource[], mirrors: Mirrors, prober: Prober = httpProber): Promise<ProbeResult[]> {
  return Promise.all(
    sources.map(async (source) => {
      const url = probeUrl(source, mirrors);
      const problem = await prober(url, PROBE_TIMEOUT_MS);
      return problem === undefined ? { source, url } : { source, url, problem };
    }),
  );
}

/**
 * How the probes went, when a proxy was involved: `via proxy http://proxy:3128`, with the hosts that went direct
 * (NO_PROXY) or through another proxy named; '' when every probe went direct. Credentials never show (`http://***@proxy:3128`).
 * A proxy variable that does not parse is exit 2 here, before anything is asked.
 */
function proxyNote(urls: readonly { host: string; url: string }[], env: NodeJS.ProcessEnv = process.env): string {
  const byProxy = new Map<string, string[]>();
  const direct: string[] = [];
  for (const { host, url } of urls) {
    const proxy = proxyFor(url, env);
    if (proxy) byProxy.set(proxy.shown, [...(byProxy.get(proxy.shown) ?? []), host]);
    else direct.push(host);
  }
  if (!byProxy.size) return '';
  const directly = direct.length ? `; ${direct.join(', ')} direct` : '';
  if (byProxy.size === 1) return `via proxy ${[...byProxy.keys()][0]}${directly}`;
  return `via proxies ${[...byProxy].map(([proxy, hosts]) => `${proxy} (${hosts.join(', ')})`).join(', ')}${directly}`;
}

/** What `up` and `setup` provision from, said once before they start. */
export interface ArtifactsDecision {
  mode: ArtifactsMode;
  /** `official`: fetch from the publishers (under `auto`, what fails is still built); `build`: build here only. */
  source: 'official' | 'build';
  reason: string;
  /** `artifacts: official (registries answered)` */
  line: string;
}

/** The ProvisionOptions.artifacts a decision stands for. */
export function provisionMode(decision: ArtifactsDecision): ArtifactsMode {
  return decision.source === 'build' ? 'build' : decision.mode;
}

/** "dl.k8s.io, quay.io did not answer: ENOTFOUND", or each host with its own reason when they differ. */
function silentHosts(failed: ProbeResult[]): string {
  const problems = [...new Set(failed.map((f) => f.problem))];
  if (problems.length === 1) return `${failed.map((f) => f.source.host).join(', ')} did not answer: ${problems[0]}`;
  return failed.map((f) => `${f.source.host} did not answer: ${f.problem}`).join('; ');
}

/**
 * Decides where artifacts come from. `build` asks nobody; `official` and `auto` ask every publisher the lab
 * needs at once, briefly. Under `official` a publisher that does not answer is an error naming it and what
 * to do; under `auto` the lab is built here and the line says why.
 */
export async function decideArtifacts(
  choice: ArtifactsChoice,
  opts: { sources: readonly OfficialSource[]; mirrors: Mirrors; prober?: Prober; env?: NodeJS.ProcessEnv },
): Promise<ArtifactsDecision> {
  const decided = (source: 'official' | 'build', reason: string): ArtifactsDecision => ({
    mode: choice.mode,
    source,
    reason,
    line: `artifacts: ${source === 'official' ? 'official' : 'built here'} (${reason})`,
  });
  if (choice.mode === 'build') return decided('build', choice.origin);
  const via = proxyNote(
    opts.sources.map((source) => ({ host: source.host, url: probeUrl(source, opts.mirrors) })),
    opts.env,
  );
  const results = await probeOfficialSources(opts.sources, opts.mirrors, opts.prober);
  const failed = results.filter((r) => r.problem !== undefined);
  const answered = via ? `registries answered ${via}` : 'registries answered';
  if (!failed.length) return decided('official', choice.mode === 'official' ? `${choice.origin}; ${answered}` : answered);
  if (choice.mode === 'auto') return decided('build', `${silentHosts(failed)}${via ? `; asked ${via}` : ''}`);
  const asked = via ? ` (asked ${via})` : '';
  throw new MissingPrerequisiteError(`${choice.origin}: ${failed.map((f) => `${f.source.host} did not answer (${f.url}: ${f.problem})`).join('; ')}${asked}`, {
    hint:
      `let this machine reach ${failed.map((f) => f.source.host).join(', ')}, or name mirrors for them in a mirrors file ` +
      '(--mirrors FILE, mirrors: in the lab file, $OCM_LAB_MIRRORS; docs/provisioning.md), or build here with --artifacts build (auto falls back to it)',
  });
}
