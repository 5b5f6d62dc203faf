import { describe, expect, it } from 'vitest';
import { OCM_LAB_IMAGE } from '../../src/images/catalogue.js';
import { containerArgv } from '../../src/nodelet/command.js';
import { resolveEnv } from '../../src/nodelet/env.js';
import { ContainerStartError } from '../../src/nodelet/errors.js';
import { expandVars } from '../../src/nodelet/expansion.js';
import { ImageCatalog, type RunnableImage } from '../../src/nodelet/images.js';
import type { ConfigMap, Container, NodeFacts, ObjectSource, Pod, Secret } from '../../src/nodelet/types.js';

const node: NodeFacts = { nodeName: 'cluster1-nodelet', address: '10.0.2.10', cpuCores: 2, memoryBytes: 8 * 2 ** 30 };
const b64 = (s: string) => Buffer.from(s).toString('base64');

function source(secrets: Record<string, Record<string, string>>, configMaps: Record<string, Record<string, string>>): ObjectSource & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    secret: async (ns, name) => {
      reads.push(`secret ${ns}/${name}`);
      const data = secrets[`${ns}/${name}`];
      return data ? ({ metadata: { name }, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])) } as Secret) : null;
    },
    configMap: async (ns, name) => {
      reads.push(`configmap ${ns}/${name}`);
      const data = configMaps[`${ns}/${name}`];
      return data ? ({ metadata: { name }, data } as ConfigMap) : null;
    },
  };
}

function pod(container: Container): Pod {
  return {
    metadata: { name: 'web-1', namespace: 'team', uid: 'u-1', labels: { app: 'web' }, annotations: { note: 'hi' } },
    spec: { nodeName: 'cluster1-nodelet', serviceAccountName: 'reader', containers: [container] },
  };
}

async function configError(p: Promise<unknown>): Promise<ContainerStartError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ContainerStartError);
  return err as ContainerStartError;
}

describe('nodelet env resolution', () => {
  const objects = source({ 'team/db': { password: 'hunter2' } }, { 'team/settings': { color: 'blue', 'bad key': 'x' } });

  it('resolves fieldRef, secretKeyRef and configMapKeyRef like the kubelet', async () => {
    const c: Container = {
      name: 'main',
      image: OCM_LAB_IMAGE,
      env: [
        { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
        { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
        { name: 'SA', valueFrom: { fieldRef: { fieldPath: 'spec.serviceAccountName' } } },
        { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
        { name: 'COLOR', valueFrom: { configMapKeyRef: { name: 'settings', key: 'color' } } },
      ],
    };
    const env = await resolveEnv(pod(c), c, node, objects);
    expect(env).toEqual({
      POD_NAME: 'web-1',
      POD_NAMESPACE: 'team',
      APP: 'web',
      POD_IP: '10.0.2.10',
      NODE: 'cluster1-nodelet',
      SA: 'reader',
      PASSWORD: 'hunter2',
      COLOR: 'blue',
    });
  });

  it('leaves optional references that do not resolve unset', async () => {
    const c: Container = {
      name: 'main',
      env: [
        { name: 'A', valueFrom: { secretKeyRef: { name: 'missing', key: 'x', optional: true } } },
        { name: 'B', valueFrom: { secretKeyRef: { name: 'db', key: 'missing', optional: true } } },
        { name: 'C', valueFrom: { configMapKeyRef: { name: 'missing', key: 'x', optional: true } } },
        { name: 'D', value: 'set' },
      ],
      envFrom: [{ configMapRef: { name: 'missing', optional: true } }],
    };
    expect(await resolveEnv(pod(c), c, node, objects)).toEqual({ D: 'set' });
  });

  it('reports a missing non-optional Secret, ConfigMap or key as CreateContainerConfigError (retryable)', async () => {
    const cases: Container['env'][] = [
      [{ name: 'X', valueFrom: { secretKeyRef: { name: 'nope', key: 'k' } } }],
      [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'settings', key: 'nokey' } } }],
    ];
    const messages: string[] = [];
    for (const env of cases) {
      const c: Container = { name: 'main', env };
      const err = await configError(resolveEnv(pod(c), c, node, objects));
      expect(err.reason).toBe('CreateContainerConfigError');
      expect(err.retryable).toBe(true);
      messages.push(err.message);
    }
    expect(messages[0]).toBe('secret "nope" not found (env X)');
    expect(messages[1]).toBe("couldn't find key nokey in ConfigMap team/settings (env X)");
  });

  it('applies envFrom (with prefix, skipping invalid names) before env, and expands $(VAR) against earlier values', async () => {
    const c: Container = {
      name: 'main',
      envFrom: [{ configMapRef: { name: 'settings' }, prefix: 'CFG_' }, { secretRef: { name: 'db' } }],
      env: [
        { name: 'CFG_color', value: 'red' },
        { name: 'URL', value: 'http://$(CFG_color):$(PORT)/$$(KEEP)' },
      ],
    };
    const env = await resolveEnv(pod(c), c, node, objects, { PORT: '8080' });
    expect(env).toEqual({ PORT: '8080', CFG_color: 'red', password: 'hunter2', URL: 'http://red:8080/$(KEEP)' });
    expect(env['CFG_bad key']).toBeUndefined();
  });

  it('reads each referenced object once per resolution', async () => {
    const counting = source({ 'team/db': { a: '1', b: '2' } }, {});
    const c: Container = {
      name: 'main',
      env: [
        { name: 'A', valueFrom: { secretKeyRef: { name: 'db', key: 'a' } } },
        { name: 'B', valueFrom: { secretKeyRef: { name: 'db', key: 'b' } } },
      ],
    };
    await resolveEnv(pod(c), c, node, counting);
    expect(counting.reads).toEqual(['secret team/db']);
  });

  it('resolves resourceFieldRef from limits, or from node capacity without a limit', async () => {
    const c: Container = {
      name: 'main',
      resources: { limits: { memory: '256Mi' } },
      env: [
        { name: 'MEM_MI', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
        { name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
      ],
    };
    expect(await resolveEnv(pod(c), c, node, objects)).toEqual({ MEM_MI: '256', CPU: '2' });
  });

  it('rejects an unknown fieldPath for good (not retryable)', async () => {
    const c: Container = { name: 'main', env: [{ name: 'X', valueFrom: { fieldRef: { fieldPath: 'spec.bogus' } } }] };
    const err = await configError(resolveEnv(pod(c), c, node, objects));
    expect(err.retryable).toBe(false);
    expect(err.message).toContain("'spec.bogus'");
  });
});

describe('$(VAR) expansion', () => {
  const vars: Record<string, string> = { A: 'x', EMPTY: '' };
  it.each([
    ['$(A)', 'x'],
    ['pre-$(A)-post', 'pre-x-post'],
    ['$(UNDEFINED)', '$(UNDEFINED)'],
    ['$$(A)', '$(A)'],
    ['$$', '$'],
    ['$(EMPTY)!', '!'],
    ['$(A', '$(A'],
    ['cost $5', 'cost $5'],
    ['end$', 'end$'],
  ])('%s → %s', (input, output) => {
    expect(expandVars(input, (n) => vars[n])).toBe(output);
  });
});

describe('container command mapping', () => {
  const env = { ENTRY: 'test-workload' };
  const images = new ImageCatalog({
    ocmVersion: 'v1.2.1',
    binaries: { 'registration-operator': '/cache/bin/ocm-v1.2.1/registration-operator' },
    cli: { nodeBinary: '/usr/bin/node', cliMain: '/opt/ocm-lab/dist/cli/main.js', packageRoot: '/opt/ocm-lab' },
  });
  const image = (ref: string) => images.resolve(ref) as RunnableImage;
  const cli = ['/usr/bin/node', '/opt/ocm-lab/dist/cli/main.js'];

  it('runs args through the ocm-lab entry point when command is empty', () => {
    const c: Container = { name: 'c', image: OCM_LAB_IMAGE, args: ['internal', '$(ENTRY)', '--port', '80'] };
    expect(containerArgv(c, image(OCM_LAB_IMAGE), env)).toEqual([...cli, 'internal', 'test-workload', '--port', '80']);
  });

  it('treats command ["ocm-lab", …] (also by path) as the same entry point, command before args', () => {
    const c: Container = { name: 'c', image: `docker.io/library/${OCM_LAB_IMAGE}`, command: ['ocm-lab', 'internal'], args: ['test-workload'] };
    expect(containerArgv(c, image(`docker.io/library/${OCM_LAB_IMAGE}`), env)).toEqual([...cli, 'internal', 'test-workload']);
    expect(containerArgv({ name: 'c', command: ['/usr/local/bin/ocm-lab', 'internal', 'nodelet'] }, image(OCM_LAB_IMAGE), env)).toEqual([
      ...cli,
      'internal',
      'nodelet',
    ]);
  });

  it('runs any other command as given (found on PATH inside the container)', () => {
    expect(containerArgv({ name: 'c', command: ['/bin/sh', '-c', 'echo $(ENTRY)'] }, image(OCM_LAB_IMAGE), env)).toEqual([
      '/bin/sh',
      '-c',
      'echo test-workload',
    ]);
  });

  it("runs an upstream image's binary at its path in the image; without command there is nothing to run", () => {
    const op = image('quay.io/open-cluster-management/registration-operator:v1.2.1');
    expect(containerArgv({ name: 'c', command: ['/registration-operator', 'operator'], args: ['--namespace=x'] }, op, env)).toEqual([
      '/registration-operator',
      'operator',
      '--namespace=x',
    ]);
    expect(containerArgv({ name: 'c', args: ['/registration-operator', 'operator'] }, op, env)).toEqual(['/registration-operator', 'operator']);
    let err: unknown;
    try {
      containerArgv({ name: 'c' }, op, env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ContainerStartError);
    expect((err as ContainerStartError).reason).toBe('CreateContainerError');
    expect((err as ContainerStartError).retryable).toBe(false);
  });
});
