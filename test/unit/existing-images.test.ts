import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { managerObjects } from '../../src/addons/install.js';
import { ExitCode, ImageUnavailableError } from '../../src/errors.js';
import { OCM_LAB_IMAGE, OCM_LAB_POD_IMAGE_ENV, ocmLabImageAt } from '../../src/images/catalogue.js';
import { existingInput } from '../../src/runtime/existing/index.js';
import { imageCheckPod, imageCheckVerdict, imagesToCheck } from '../../src/images/cluster-check.js';
import { parseImageRegistry } from '../../src/images/user-registry.js';
import { chooseHubServer, clusterInfoServer, parseHubServer } from '../../src/runtime/existing/hub-server.js';
import { PACKAGE_VERSION } from '../../src/version.js';

const ours = ocmLabImageAt('registry.lab:5000/team');
const hubImages = imagesToCheck(ours, 'v1.2.1', true);
const spokeImages = imagesToCheck(ours, 'v1.2.1', false);

const waiting = (reason: string, message = '') => ({ state: { waiting: { reason, message } } });
const statusOf = (states: Record<string, unknown>[]) => ({ containerStatuses: states.map((s, i) => ({ name: `image-${i}`, ...s })) });

describe('--image-registry', () => {
  it('names our image REG/ocm-lab:<package version>', () => {
    expect(ours).toBe(`registry.lab:5000/team/ocm-lab:${PACKAGE_VERSION}`);
    expect(ocmLabImageAt('ghcr.io/org/')).toBe(`ghcr.io/org/ocm-lab:${PACKAGE_VERSION}`);
    expect(ocmLabImageAt(undefined)).toBe(OCM_LAB_IMAGE);
    expect(OCM_LAB_IMAGE).toBe(`ocm-lab:${PACKAGE_VERSION}`);
  });

  it('takes HOST[:PORT][/PATH] and refuses anything else with exit 2 naming the value', () => {
    expect(parseImageRegistry('localhost:5001')).toBe('localhost:5001');
    expect(parseImageRegistry('ghcr.io/my-org/')).toBe('ghcr.io/my-org');
    for (const bad of ['https://ghcr.io', 'ghcr.io/Org', 'reg:5000/ocm-lab:1', 'reg@sha256:ab', '', 'a b']) {
      const err = (() => {
        try {
          parseImageRegistry(bad);
        } catch (e) {
          return e as { exitCode: number; message: string };
        }
        return null;
      })();
      expect(err?.exitCode, bad).toBe(ExitCode.invalidInput);
      expect(err?.message).toContain(JSON.stringify(bad));
    }
  });

  it('is an option of the existing runtime (flag or lab file), checked there', () => {
    const base = { kubeconfig: '/k', hubContext: 'kind-hub', spokeContexts: ['kind-c1'] };
    expect(existingInput({ ...base, imageRegistry: 'localhost:5001' })).toEqual({ ...base, imageRegistry: 'localhost:5001' });
    expect(existingInput(base)).toEqual(base);
    expect(() => existingInput({ ...base, imageRegistry: 'HTTP://x' })).toThrow(/is not a registry/);
    expect(() => existingInput({ ...base, imageRegistry: 5 })).toThrow(/runtime.existing.imageRegistry must be a non-empty string/);
  });

  it('runs the addon managers from it, telling them the image so that their agents run it too', () => {
    const pod = (objs: ReturnType<typeof managerObjects>) =>
      (objs.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: { containers: Record<string, unknown>[] } } } }).spec.template.spec
        .containers[0]!;
    expect(pod(managerObjects('managed-serviceaccount', 'hub', ours))).toMatchObject({ image: ours, env: [{ name: OCM_LAB_POD_IMAGE_ENV, value: ours }] });
    const plain = pod(managerObjects('managed-serviceaccount', 'hub'));
    expect(plain.image).toBe(OCM_LAB_IMAGE);
    expect(plain.env).toBeUndefined();
  });
});

describe('the image check of up --runtime existing', () => {
  it("checks ours and OCM's five on the hub, ours and the klusterlet's three on a spoke", () => {
    expect(hubImages.map((i) => i.image)).toEqual([
      ours,
      'quay.io/open-cluster-management/registration-operator:v1.2.1',
      'quay.io/open-cluster-management/registration:v1.2.1',
      'quay.io/open-cluster-management/work:v1.2.1',
      'quay.io/open-cluster-management/placement:v1.2.1',
      'quay.io/open-cluster-management/addon-manager:v1.2.1',
    ]);
    expect(spokeImages.map((i) => i.image.split('/').pop())).toEqual([
      `ocm-lab:${PACKAGE_VERSION}`,
      'registration-operator:v1.2.1',
      'registration:v1.2.1',
      'work:v1.2.1',
    ]);
    expect(hubImages.find((i) => i.image.includes('addon-manager'))?.command).toEqual(['/addon']);
  });

  it('is one restricted, never-restarted pod in default with a container per image; ours runs --version', () => {
    const pod = imageCheckPod('ocm-lab-image-check-x', spokeImages) as {
      metadata: { namespace: string };
      spec: { restartPolicy: string; securityContext: Record<string, unknown>; containers: Record<string, unknown>[] };
    };
    expect(pod.metadata.namespace).toBe('default');
    expect(pod.spec.restartPolicy).toBe('Never');
    expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(pod.spec.containers[0]).toMatchObject({ name: 'image-0', image: ours, args: ['--version'] });
    expect(pod.spec.containers[0]!.command).toBeUndefined();
    expect(pod.spec.containers[3]).toMatchObject({ image: 'quay.io/open-cluster-management/work:v1.2.1', command: ['/work'], args: ['--help'] });
    expect(pod.spec.containers.every((c) => (c.securityContext as { allowPrivilegeEscalation: boolean }).allowPrivilegeEscalation === false)).toBe(true);
  });

  it('fails at the first pull error, naming the image and what the node said', () => {
    const pulling = waiting('ContainerCreating');
    const verdict = imageCheckVerdict(spokeImages, statusOf([waiting('ErrImagePull', 'failed to pull "x": not found'), pulling, pulling, pulling]));
    expect(verdict).toEqual({ state: 'failed', image: ours, why: 'ErrImagePull: failed to pull "x": not found' });
    expect(imageCheckVerdict(spokeImages, statusOf([pulling, pulling, waiting('ImagePullBackOff', 'Back-off'), pulling]))).toMatchObject({
      state: 'failed',
      image: 'quay.io/open-cluster-management/registration:v1.2.1',
    });
  });

  it("needs ours to exit 0 and OCM's only to start; waits while anything is still being created", () => {
    const started = { state: { running: {} } };
    const done = (exitCode: number) => ({ state: { terminated: { exitCode, reason: exitCode ? 'Error' : 'Completed' } } });
    expect(imageCheckVerdict(spokeImages, statusOf([done(0), started, done(2), done(0)]))).toEqual({ state: 'ok' });
    expect(imageCheckVerdict(spokeImages, statusOf([done(1), started, started, started]))).toMatchObject({ state: 'failed', image: ours });
    expect(imageCheckVerdict(spokeImages, statusOf([started, started, started, started]))).toMatchObject({ state: 'pending' });
    expect(imageCheckVerdict(spokeImages, statusOf([done(0), started, waiting('ContainerCreating'), started]))).toMatchObject({ state: 'pending' });
    expect(imageCheckVerdict(spokeImages, { conditions: [{ type: 'PodScheduled', status: 'False', message: '0/1 nodes are available' }] })).toEqual({
      state: 'pending',
      why: 'not scheduled: 0/1 nodes are available',
    });
  });

  it('stops up with its own exit code', () => {
    expect(new ImageUnavailableError('x').exitCode).toBe(ExitCode.imageUnavailable);
    expect(new Set(Object.values(ExitCode)).size).toBe(Object.values(ExitCode).length);
  });
});

describe('--hub-server and the hub as spokes reach it', () => {
  it('takes an https URL of a host and port, and refuses anything else with exit 2 naming the value', () => {
    expect(parseHubServer('https://hub.internal:6443/')).toBe('https://hub.internal:6443');
    expect(parseHubServer('https://[fd00::1]:6443')).toBe('https://[fd00::1]:6443');
    for (const bad of ['http://hub:6443', 'hub:6443', 'https://hub:6443/api', 'https://hub:6443?x=1', '']) {
      expect(() => parseHubServer(bad), bad).toThrow(`--hub-server ${JSON.stringify(bad)} is not the https URL of an API server`);
    }
    expect(existingInput({ kubeconfig: '/k', hubContext: 'h', spokeContexts: ['s'], hubServer: 'https://h:6443' })).toMatchObject({
      hubServer: 'https://h:6443',
    });
  });

  it("reads the server of the kubeconfig in cluster-info as clusteradm's --force-internal-endpoint-lookup does", () => {
    const kubeconfig = YAML.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: '', cluster: { server: 'https://hub-control-plane:6443' } }] });
    expect(clusterInfoServer(kubeconfig)).toBe('https://hub-control-plane:6443');
    expect(clusterInfoServer(undefined)).toBeNull();
    expect(clusterInfoServer('clusters: []')).toBeNull();
    expect(clusterInfoServer('{')).toBeNull();
    expect(clusterInfoServer(YAML.stringify({ clusters: [{ cluster: { server: 'https://a:6443' } }, { cluster: { server: 'https://b:6443' } }] }))).toBeNull();
  });

  it('uses --hub-server when given, and the context server for contexts kind and k3d did not name', async () => {
    const endpoint = { server: 'https://203.0.113.5:6443' } as Parameters<typeof chooseHubServer>[2];
    expect(await chooseHubServer('https://hub.internal:6443', 'kind-hub', endpoint)).toEqual({ server: 'https://hub.internal:6443', why: '--hub-server' });
    expect(await chooseHubServer(undefined, 'prod-hub', endpoint)).toEqual({ server: endpoint.server, why: 'the server of context prod-hub' });
  });
});
