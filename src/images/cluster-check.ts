import crypto from 'node:crypto';
import { ImageUnavailableError } from '../errors.js';
import { isStatus, KubeClient, type KubeEndpoint } from '../kube/client.js';
import { sleep, waitUntil } from '../kube/wait.js';
import { getOrNull } from '../kube/objects.js';
import { OCM_UPSTREAM_IMAGES, ocmImage, SPOKE_OCM_IMAGES } from './catalogue.js';

/**
 * Before `up --runtime existing` installs anything: can every cluster pull and run the images the lab will run
 * there? One short-lived pod per cluster in `default` (restartPolicy Never, one container per image, removed after):
 * ours runs `--version` and must exit 0; OCM's images hold one Go binary each and no shell, so each runs that binary's
 * `--help` and only has to start (pulled, created). A container waiting with a pull error stops the check at once.
 */

/** The namespace every cluster has: the check leaves nothing else behind and needs no namespace of its own. */
const IMAGE_CHECK_NAMESPACE = 'default';
const IMAGE_CHECK_LABEL = 'ocm-lab.io/image-check';
/** Waiting reasons that mean the node cannot get the image (the kubelet's, and the nodelet's for images it does not run). */
const PULL_FAILURES = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull', 'RegistryUnavailable', 'ErrImageInspect']);

/** One image of the check and how its container runs it. */
export interface CheckedImage {
  image: string;
  /** The container's command (ours: none, the entry point runs `--version`). */
  command?: string[];
  args: string[];
  /** Ours must exit 0; OCM's only have to start. */
  mustSucceed: boolean;
}

/** Which images a cluster runs: ours everywhere; on the hub OCM's five, on a spoke the klusterlet's three. */
export function imagesToCheck(ourImage: string, ocmVersion: string, hub: boolean): CheckedImage[] {
  const ocm = OCM_UPSTREAM_IMAGES.filter((i) => hub || SPOKE_OCM_IMAGES.includes(i.image)).map((i) => ({
    image: ocmImage(i.image, ocmVersion),
    command: [i.pathInImage],
    args: ['--help'],
    mustSucceed: false,
  }));
  return [{ image: ourImage, args: ['--version'], mustSucceed: true }, ...ocm];
}

/** The check's pod: restricted-compliant (non-root, no privilege escalation, no capabilities), so any namespace policy admits it. */
export function imageCheckPod(name: string, images: readonly CheckedImage[]): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: IMAGE_CHECK_NAMESPACE, labels: { [IMAGE_CHECK_LABEL]: 'true' } },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 0,
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } },
      containers: images.map((c, i) => ({
        name: `image-${i}`,
        image: c.image,
        ...(c.command ? { command: c.command } : {}),
        args: c.args,
        imagePullPolicy: 'IfNotPresent',
        resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
      })),
    },
  };
}

interface ContainerState {
  waiting?: { reason?: string; message?: string };
  running?: object;
  terminated?: { exitCode?: number; reason?: string; message?: string };
}
interface CheckPodStatus {
  phase?: string;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
  containerStatuses?: { name: string; image?: string; imageID?: string; state?: ContainerState }[];
}

/** Where the check of one pod stands: still going, every image fine, or the first image that failed and why. */
export type CheckVerdict = { state: 'pending'; why: string } | { state: 'ok' } | { state: 'failed'; image: string; why: string };

/** The verdict on a status of imageCheckPod(images): pure, so tests can read what each kubelet answer means. */
export function imageCheckVerdict(images: readonly CheckedImage[], status: CheckPodStatus | undefined): CheckVerdict {
  const statuses = status?.containerStatuses ?? [];
  const unscheduled = status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
  if (!statuses.length)
    return { state: 'pending', why: unscheduled ? `not scheduled: ${unscheduled.message ?? unscheduled.reason ?? ''}` : 'no container status yet' };
  let pending: string | null = null;
  for (const [i, c] of images.entries()) {
    const s = statuses.find((x) => x.name === `image-${i}`);
    const state = s?.state ?? {};
    if (state.waiting?.reason && PULL_FAILURES.has(state.waiting.reason))
      return { state: 'failed', image: c.image, why: `${state.waiting.reason}: ${state.waiting.message ?? '(no message)'}` };
    if (state.terminated) {
      const { exitCode, reason, message } = state.terminated;
      if (c.mustSucceed && exitCode !== 0) {
        const said = `${reason ?? ''}${message ? `: ${message}` : ''}`;
        return { state: 'failed', image: c.image, why: `pulled, but \`${c.args.join(' ')}\` exited ${exitCode ?? '?'} (${said})` };
      }
      continue;
    }
    if (state.running && !c.mustSucceed) continue;
    pending ??= `${c.image}: ${state.waiting?.reason ?? (state.running ? 'running' : 'no state yet')}`;
  }
  return pending ? { state: 'pending', why: pending } : { state: 'ok' };
}

/** A cluster the check runs on. */
export interface ImageCheckTarget {
  cluster: string;
  context: string;
  endpoint: KubeEndpoint;
  images: CheckedImage[];
}

/** What a check found on one cluster: null when every image runs. */
interface ImageProblem {
  cluster: string;
  context: string;
  /** The image that failed, when one did (absent: the pod got no verdict in time). */
  image?: string;
  why: string;
}

/** Runs the check on one cluster: creates the pod, watches its status until a verdict or the timeout, and deletes it in every case. */
async function checkClusterImages(target: ImageCheckTarget, timeoutMs: number): Promise<ImageProblem | null> {
  const client = new KubeClient(target.endpoint);
  const name = `ocm-lab-image-check-${crypto.randomBytes(3).toString('hex')}`;
  const podPath = `/api/v1/namespaces/${IMAGE_CHECK_NAMESPACE}/pods`;
  try {
    // A new cluster's `default` ServiceAccount comes a moment after its API server; until then admission refuses every pod.
    await waitUntil(async () => ((await getOrNull(client, `/api/v1/namespaces/${IMAGE_CHECK_NAMESPACE}/serviceaccounts/default`)) ? true : undefined), {
      timeoutMs: 60_000,
      what: `${target.cluster}: the ServiceAccount ${IMAGE_CHECK_NAMESPACE}/default`,
    });
    await client.post(podPath, imageCheckPod(name, target.images));
    const deadline = Date.now() + timeoutMs;
    let verdict: CheckVerdict = { state: 'pending', why: 'not created yet' };
    while (Date.now() < deadline) {
      const pod = await client.get<{ status?: CheckPodStatus }>(`${podPath}/${name}`);
      verdict = imageCheckVerdict(target.images, pod.status);
      if (verdict.state === 'ok') return null;
      if (verdict.state === 'failed') return { cluster: target.cluster, context: target.context, image: verdict.image, why: verdict.why };
      await sleep(1_000);
    }
    // No pull error, no start: unscheduled, or a pull still going; the last status says which.
    return {
      cluster: target.cluster,
      context: target.context,
      why: `its check pod got no verdict within ${Math.round(timeoutMs / 1000)} s: ${verdict.state === 'pending' ? verdict.why : ''}`,
    };
  } finally {
    await client.delete(`${podPath}/${name}`, { gracePeriodSeconds: 0 }).catch((err: unknown) => {
      if (!isStatus(err, 404)) throw err;
    });
    client.close();
  }
}

/** Runs the check on every cluster at once; the first problems stop `up` with ImageUnavailableError (exit 8), naming each. */
export async function checkImages(targets: readonly ImageCheckTarget[], timeoutMs: number, progress: (line: string) => void): Promise<string> {
  const problems = (
    await Promise.all(
      targets.map(async (t) => {
        progress(`${t.cluster}: a pod of ${t.images.length} images in ${IMAGE_CHECK_NAMESPACE}`);
        return checkClusterImages(t, timeoutMs);
      }),
    )
  ).filter((p): p is ImageProblem => p !== null);
  if (problems.length) {
    const lines = problems.map((p) => `cluster ${p.cluster} (context ${p.context}) cannot run ${p.image ? `image ${p.image}` : 'the lab images'}: ${p.why}`);
    throw new ImageUnavailableError(lines.join('\n'), {
      hint:
        'nothing was installed. Make the image available to those nodes: push ours with --image-registry REG (a registry ' +
        'they pull from), or let them reach quay.io for OCM; docs/existing-clusters.md "Images"',
    });
  }
  return `${targets.map((t) => t.cluster).join(', ')} run ${[...new Set(targets.flatMap((t) => t.images.map((i) => i.image)))].join(', ')}`;
}
