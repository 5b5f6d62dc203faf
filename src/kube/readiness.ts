import https from 'node:https';

export interface ClientTls {
  caPem: string;
  certPem: string;
  keyPem: string;
}

/** One GET against a kube-apiserver health endpoint; resolves with the status code and body, or the error text. */
export function probe(url: string, tls: ClientTls, timeoutMs = 2_000): Promise<{ ok: boolean; status: number; body: string }> {
  return new Promise((resolve) => {
    const req = https.get(url, { ca: tls.caPem, cert: tls.certPem, key: tls.keyPem, timeout: timeoutMs, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (body.length < 4096) body += chunk;
      });
      res.on('end', () => resolve({ ok: res.statusCode === 200, status: res.statusCode ?? 0, body }));
      res.on('error', (err) => resolve({ ok: false, status: 0, body: err.message }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => resolve({ ok: false, status: 0, body: err.message }));
  });
}
