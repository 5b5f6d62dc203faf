import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { containerPath } from '../../src/nodelet/container-path.js';
import { ContainerStartError } from '../../src/nodelet/errors.js';
import { materialiseVolumes } from '../../src/nodelet/pod-files.js';
import { mountLinks, renderVolume, type VolumeSources } from '../../src/nodelet/volumes.js';
import type { ConfigMap, NodeFacts, Pod, Secret, Volume } from '../../src/nodelet/types.js';

const node: NodeFacts = { nodeName: 'n', address: '10.0.0.5', cpuCores: 2, memoryBytes: 2 ** 30 };
const b64 = (s: string) => Buffer.from(s).toString('base64');

function sources(): VolumeSources & { tokenCalls: string[] } {
  const tokenCalls: string[] = [];
  return {
    tokenCalls,
    node,
    objects: {
      secret: async (_ns, name) => (name === 'creds' ? ({ metadata: { name }, data: { user: b64('admin'), pass: b64('s3cret') } } as Secret) : null),
      configMap: async (_ns, name) => (name === 'kube-root-ca.crt' ? ({ metadata: { name }, data: { 'ca.crt': 'CA PEM' } } as ConfigMap) : null),
    },
    token: async (aud, exp) => {
      tokenCalls.push(`${aud ?? ''}|${exp}`);
      return `token-for-${aud ?? 'apiserver'}`;
    },
  };
}

/** The volume the ServiceAccount admission plugin adds to every pod. */
const kubeApiAccess: Volume = {
  name: 'kube-api-access-abcde',
  projected: {
    sources: [
      { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
  },
};

function pod(volumes: Volume[], mounts: { name: string; mountPath: string; subPath?: string }[]): Pod {
  return {
    metadata: { name: 'p', namespace: 'team', uid: 'u' },
    spec: { containers: [{ name: 'main', image: 'ocm-lab:dev', volumeMounts: mounts }], volumes },
  };
}

describe('volume rendering', () => {
  it('renders the kube-api-access projected volume: token, ca.crt, namespace', async () => {
    const s = sources();
    const v = await renderVolume(pod([kubeApiAccess], []), kubeApiAccess, s);
    expect(v.kind).toBe('files');
    const files = v.kind === 'files' ? v.files : [];
    expect(files.map((f) => [f.path, f.data.toString(), f.mode.toString(8)])).toEqual([
      ['token', 'token-for-apiserver', '600'],
      ['ca.crt', 'CA PEM', '644'],
      ['namespace', 'team', '644'],
    ]);
    expect(s.tokenCalls).toEqual(['|3607']);
  });

  it('renders secret items under their paths; a missing key or secret is an error unless optional', async () => {
    const s = sources();
    const withItems: Volume = { name: 'c', secret: { secretName: 'creds', items: [{ key: 'pass', path: 'sub/password' }] } };
    const r = await renderVolume(pod([withItems], []), withItems, s);
    expect(r.kind === 'files' && r.files.map((f) => [f.path, f.data.toString()])).toEqual([['sub/password', 's3cret']]);

    const missing: Volume = { name: 'm', secret: { secretName: 'nope' } };
    await expect(renderVolume(pod([missing], []), missing, s)).rejects.toThrow('volume m: secret "nope" not found');
    const optional: Volume = { name: 'o', secret: { secretName: 'nope', optional: true } };
    expect(await renderVolume(pod([optional], []), optional, s)).toEqual({ kind: 'files', files: [] });
  });

  it('refuses item paths that leave the volume', async () => {
    const bad: Volume = { name: 'c', secret: { secretName: 'creds', items: [{ key: 'pass', path: '../escape' }] } };
    await expect(renderVolume(pod([bad], []), bad, sources())).rejects.toThrow("path '../escape' must be relative");
  });

  it('names the supported types when a volume type is not supported', async () => {
    const hostPath: Volume = { name: 'h', hostPath: { path: '/etc' } };
    const err = await renderVolume(pod([hostPath], []), hostPath, sources()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContainerStartError);
    expect((err as ContainerStartError).retryable).toBe(false);
    expect((err as Error).message).toBe('volume h: type hostPath is not supported by the nodelet (supported: secret, configMap, projected, downwardAPI, emptyDir)');
  });
});

describe('mount paths', () => {
  it('maps mountPath to <podDir>/root/<mountPath> and subPath into the volume', () => {
    const p = pod(
      [kubeApiAccess, { name: 'cfg', configMap: { name: 'x' } }],
      [
        { name: 'kube-api-access-abcde', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
        { name: 'cfg', mountPath: '/etc/app/config.yaml', subPath: 'config.yaml' },
      ],
    );
    expect(mountLinks('/pods/team_p_u', p, p.spec.containers)).toEqual([
      { link: '/pods/team_p_u/root/etc/app/config.yaml', target: '/pods/team_p_u/volumes/cfg/config.yaml', volume: 'cfg' },
      {
        link: '/pods/team_p_u/root/var/run/secrets/kubernetes.io/serviceaccount',
        target: '/pods/team_p_u/volumes/kube-api-access-abcde',
        volume: 'kube-api-access-abcde',
      },
    ]);
  });

  it('rejects mounts of unknown volumes, relative paths, clashes and nesting', () => {
    const v = [{ name: 'a', emptyDir: {} }, { name: 'b', emptyDir: {} }];
    expect(() => mountLinks('/d', pod(v, [{ name: 'zzz', mountPath: '/x' }]), pod(v, [{ name: 'zzz', mountPath: '/x' }]).spec.containers)).toThrow(
      'volumeMount zzz names no volume',
    );
    const rel = pod(v, [{ name: 'a', mountPath: 'x' }]);
    expect(() => mountLinks('/d', rel, rel.spec.containers)).toThrow("mountPath 'x' must be an absolute path");
    const clash = pod(v, [
      { name: 'a', mountPath: '/data' },
      { name: 'b', mountPath: '/data' },
    ]);
    expect(() => mountLinks('/d', clash, clash.spec.containers)).toThrow('mountPath /data is used for two different volumes');
    const nested = pod(v, [
      { name: 'a', mountPath: '/data' },
      { name: 'b', mountPath: '/data/inner' },
    ]);
    expect(() => mountLinks('/d', nested, nested.spec.containers)).toThrow('mountPath /data/inner is inside another mount');
  });
});

describe('materialised pod directory', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'nodelet-vol-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('makes in-container paths readable through containerPath() with OCM_LAB_POD_ROOT', async () => {
    const p = pod(
      [kubeApiAccess, { name: 'creds', secret: { secretName: 'creds' } }, { name: 'scratch', emptyDir: {} }],
      [
        { name: 'kube-api-access-abcde', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
        { name: 'creds', mountPath: '/etc/creds' },
        { name: 'scratch', mountPath: '/tmp/scratch' },
      ],
    );
    await materialiseVolumes(dir, p, sources());
    const env = { OCM_LAB_POD_ROOT: path.join(dir, 'root') };
    const read = (p2: string) => fs.readFile(containerPath(p2, env), 'utf8');
    expect(await read('/var/run/secrets/kubernetes.io/serviceaccount/token')).toBe('token-for-apiserver');
    expect(await read('/var/run/secrets/kubernetes.io/serviceaccount/namespace')).toBe('team');
    expect(await read('/etc/creds/pass')).toBe('s3cret');
    expect((await fs.stat(containerPath('/etc/creds/pass', env))).mode & 0o777).toBe(0o600);
    expect((await fs.stat(containerPath('/tmp/scratch', env))).isDirectory()).toBe(true);
    expect((await fs.stat(dir)).mode & 0o777).toBe(0o700);
  });

  it('removes files that vanished from their source on the next pass', async () => {
    const p = pod([{ name: 'creds', secret: { secretName: 'creds' } }], [{ name: 'creds', mountPath: '/etc/creds' }]);
    await materialiseVolumes(dir, p, sources());
    const fewer = sources();
    fewer.objects.secret = async (_ns, name) => ({ metadata: { name }, data: { user: b64('admin') } }) as Secret;
    await materialiseVolumes(dir, p, fewer);
    expect((await fs.readdir(path.join(dir, 'volumes', 'creds'))).sort()).toEqual(['user']);
  });
});

describe('containerPath', () => {
  it('is the identity outside a nodelet pod and for relative paths', () => {
    expect(containerPath('/var/run/x', {})).toBe('/var/run/x');
    expect(containerPath('rel/x', { OCM_LAB_POD_ROOT: '/pods/p/root' })).toBe('rel/x');
    expect(containerPath('/var/run/x', { OCM_LAB_POD_ROOT: '/pods/p/root' })).toBe('/pods/p/root/var/run/x');
  });
});
