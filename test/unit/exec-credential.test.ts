import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExecCredentialError, ExecCredentials, execConfigOf, type ExecConfig } from '../../src/kube/exec-credential.js';
import { pluginCalls, writeExecPlugin } from '../support/exec-plugin.js';
import { useTempDir } from '../support/temp-dir.js';

const V1 = 'client.authentication.k8s.io/v1';

describe('reading a kubeconfig exec stanza', () => {
  it('resolves a relative command with a separator against the kubeconfig folder, as client-go; a bare name stays for PATH', () => {
    expect(execConfigOf({ apiVersion: V1, command: './bin/plugin', interactiveMode: 'Never' }, '/home/u/.kube', 'ctx').command).toBe(
      '/home/u/.kube/bin/plugin',
    );
    expect(execConfigOf({ apiVersion: V1, command: 'gke-gcloud-auth-plugin', interactiveMode: 'IfAvailable' }, '/x', 'ctx').command).toBe(
      'gke-gcloud-auth-plugin',
    );
  });

  it('names the field and what to use when a stanza is wrong', () => {
    const bad = (exec: Record<string, unknown>) => () => execConfigOf(exec, '/x', "context 'c'");
    expect(bad({ apiVersion: 'client.authentication.k8s.io/v1alpha1', command: 'p' })).toThrow(
      /exec.apiVersion is "client.authentication.k8s.io\/v1alpha1": use one of/,
    );
    expect(bad({ apiVersion: V1, command: 'p' })).toThrow(/exec.interactiveMode is required by client.authentication.k8s.io\/v1/);
    expect(bad({ apiVersion: V1, interactiveMode: 'Never' })).toThrow(/exec.command is missing/);
    expect(bad({ apiVersion: V1, command: 'p', interactiveMode: 'Sometimes' })).toThrow(/interactiveMode is "Sometimes"/);
    expect(bad({ apiVersion: V1, command: 'p', interactiveMode: 'Never', env: [{ name: 'A' }] })).toThrow(/exec.env must be a list/);
  });
});

describe('running a credential plugin', () => {
  const tmp = useTempDir('exec-plugin', { each: true });
  const cluster = { context: 'eks-prod', server: 'https://10.9.9.9:443', caPem: 'CA' };
  const plugin = async (extra: Partial<ExecConfig> = {}) => {
    const command = await writeExecPlugin(tmp.path);
    return new ExecCredentials({ apiVersion: V1, command, interactiveMode: 'IfAvailable', ...extra }, cluster);
  };
  const set = (name: string, value: string) => fs.writeFile(path.join(tmp.path, name), value);

  it('keeps the token until its expiry and runs the plugin again after it', async () => {
    await set('token', 'first');
    await set('ttl', '6');
    const creds = await plugin();
    expect(await creds.token()).toBe('first');
    expect(await creds.token()).toBe('first');
    expect(await pluginCalls(tmp.path)).toBe(1);
    await set('token', 'second');
    await new Promise((r) => setTimeout(r, 1_200)); // 6 s left minus the 5 s margin
    expect(await creds.token()).toBe('second');
    expect(await pluginCalls(tmp.path)).toBe(2);
  });

  it('a token without expiry is kept until the server refuses it', async () => {
    await set('token', 'forever');
    const creds = await plugin({ env: [{ name: 'UNIQUE', value: 'no-expiry' }] });
    await Promise.all([creds.token(), creds.token(), creds.token()]);
    expect(await pluginCalls(tmp.path)).toBe(1);
    creds.invalidate();
    await set('token', 'renewed');
    expect(await creds.token()).toBe('renewed');
    expect(await pluginCalls(tmp.path)).toBe(2);
  });

  it('passes KUBERNETES_EXEC_INFO, with the cluster only when provideClusterInfo is set', async () => {
    await set('token', 't');
    await (await plugin({ provideClusterInfo: true, env: [{ name: 'UNIQUE', value: 'info' }] })).token();
    const info = JSON.parse(await fs.readFile(path.join(tmp.path, 'info'), 'utf8')) as { spec: { interactive: boolean; cluster?: { server: string } } };
    expect(info).toMatchObject({ apiVersion: V1, kind: 'ExecCredential', spec: { interactive: false, cluster: { server: cluster.server } } });
  });

  it('names the context, the plugin and its stderr when it fails, and caches nothing', async () => {
    await set('fail', 'no SSO session: run aws sso login');
    const creds = await plugin({ env: [{ name: 'UNIQUE', value: 'fail' }] });
    const err = (await creds.token().catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(ExecCredentialError);
    expect(err.message).toMatch(/^context 'eks-prod': credential plugin .*token-plugin.mjs failed \(3\): token-plugin: no SSO session: run aws sso login$/);
    await fs.rm(path.join(tmp.path, 'fail'));
    await set('token', 'after-login');
    expect(await creds.token()).toBe('after-login');
  });

  it('says so for a plugin that is not installed (with its installHint) or needs a terminal', async () => {
    const missing = new ExecCredentials(
      { apiVersion: V1, command: '/nonexistent/kubelogin', interactiveMode: 'Never', installHint: 'install kubelogin' },
      cluster,
    );
    await expect(missing.token()).rejects.toThrow(/kubelogin: not found \(install kubelogin\)/);
    await expect((await plugin({ interactiveMode: 'Always' })).token()).rejects.toThrow(/interactiveMode Always, and ocm-lab runs plugins without a terminal/);
  });
});
