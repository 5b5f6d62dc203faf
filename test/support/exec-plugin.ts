import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * A credential plugin as EKS's or GKE's would be (client.authentication.k8s.io/v1): it prints an
 * ExecCredential with the token in `<dir>/token` and an expiry `<dir>/ttl` seconds away (none when
 * the file is absent), counts its calls in `<dir>/calls`, records its KUBERNETES_EXEC_INFO in
 * `<dir>/info`, and fails with a message on stderr while `<dir>/fail` exists.
 */
export async function writeExecPlugin(dir: string): Promise<string> {
  const file = path.join(dir, 'token-plugin.mjs');
  await fs.writeFile(
    file,
    `#!${process.execPath}
import fs from 'node:fs';
const dir = ${JSON.stringify(dir)};
const read = (name) => { try { return fs.readFileSync(dir + '/' + name, 'utf8').trim(); } catch { return undefined; } };
fs.writeFileSync(dir + '/calls', String(Number(read('calls') ?? 0) + 1));
fs.writeFileSync(dir + '/info', process.env.KUBERNETES_EXEC_INFO ?? '');
if (read('fail') !== undefined) { process.stderr.write('token-plugin: ' + read('fail') + '\\n'); process.exit(3); }
const ttl = read('ttl');
const status = { token: read('token') ?? '', ...(ttl ? { expirationTimestamp: new Date(Date.now() + Number(ttl) * 1000).toISOString() } : {}) };
process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status }));
`,
    { mode: 0o755 },
  );
  return file;
}

export async function pluginCalls(dir: string): Promise<number> {
  return Number((await fs.readFile(path.join(dir, 'calls'), 'utf8').catch(() => '0')).trim());
}
