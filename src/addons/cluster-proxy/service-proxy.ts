import fs from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import { listen } from '../../util/listen.js';
import { KubeClient, type KubeEndpoint } from '../../kube/client.js';
import { nodeTlsOptions, type TlsProfile } from '../../tunnel/tls-profile.js';
import { endToEndHeaders, forwardRequest, forwardUpgrade, socketError, type HopTarget } from './http-forward.js';
import { bearerToken, decideAuthentication, isImpersonationHeader, targetFromHeaders, UserRequestError, type Review } from './service-routing.js';

export interface ServiceProxyOptions {
  serving: { certPem: string; keyPem: string };
  tlsProfile: TlsProfile;
  port: number;
  host?: string;
  /** The managed cluster's API server as the pod sees it (in-cluster: address, CA, ServiceAccount token file). */
  cluster: KubeEndpoint & { tokenFile: string };
  /** CAs besides the cluster's that HTTPS Services may be signed by (`--additional-service-ca`). */
  serviceCaPems?: string[];
  /** The agent's hub kubeconfig (from the registration agent); read at each review, so a late or rotated one is picked up. */
  hubKubeconfig?: string;
  /** Upstream's `--enable-impersonation` (default on): API-server requests are authenticated here first. */
  impersonation: boolean;
  log?: (line: string) => void;
}

export interface ServiceProxy {
  port: number;
  close(): Promise<void>;
}

/** A status with a message for the caller (nothing secret in it). */
class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface TokenReview {
  status?: { authenticated?: boolean; user?: { username?: string; groups?: string[] }; error?: string };
}

async function review(client: KubeClient, token: string): Promise<Review> {
  const r = await client.post<TokenReview>('/apis/authentication.k8s.io/v1/tokenreviews', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    spec: { token },
  });
  if (!r.status?.authenticated || !r.status.user?.username) return null;
  return { username: r.status.user.username, groups: r.status.user.groups ?? [] };
}

/** The caller's token reviewed on the hub, when the agent has a hub kubeconfig. */
async function hubReview(opts: ServiceProxyOptions, token: string): Promise<Review> {
  if (!opts.hubKubeconfig) return null;
  let hub: KubeClient;
  try {
    hub = await KubeClient.fromKubeconfig(opts.hubKubeconfig);
  } catch (err) {
    throw new Refusal(
      503,
      `cannot check the token on the hub yet: the agent's hub kubeconfig ${opts.hubKubeconfig} is not usable (${(err as Error).message}); ` +
        "the registration agent writes Secret cluster-proxy-hub-kubeconfig once the hub approves the addon's CSR",
    );
  }
  try {
    return await review(hub, token);
  } finally {
    hub.close();
  }
}

/** The API-server hop's Authorization and impersonation headers, by the caller's token. */
async function authenticateCaller(opts: ServiceProxyOptions, managed: KubeClient, headers: http.OutgoingHttpHeaders): Promise<string> {
  const token = bearerToken(headers.authorization as string | undefined);
  if (!token) throw new Refusal(401, 'no bearer token: send Authorization: Bearer <token> (a token of the hub or of this cluster)');
  const onCluster = await review(managed, token).catch((err: Error) => {
    throw new Refusal(503, `TokenReview on the managed cluster failed: ${err.message}`);
  });
  const onHub = onCluster
    ? null
    : await hubReview(opts, token).catch((err: Error) => {
        if (err instanceof Refusal) throw err;
        throw new Refusal(503, `TokenReview on the hub failed: ${err.message}`);
      });
  const decision = decideAuthentication(onCluster, onHub);
  if (decision.action === 'reject') throw new Refusal(401, `authentication failed: ${decision.reason}`);
  if (decision.action === 'pass') return 'cluster token';
  for (const name of Object.keys(headers)) if (isImpersonationHeader(name)) delete headers[name];
  headers['impersonate-user'] = decision.user;
  if (decision.groups.length) headers['impersonate-group'] = decision.groups;
  const own = (await fs.readFile(opts.cluster.tokenFile, 'utf8')).trim();
  headers.authorization = `Bearer ${own}`;
  return `hub user ${decision.user}`;
}

function refusal(err: unknown): Refusal {
  if (err instanceof Refusal) return err;
  if (err instanceof UserRequestError) return new Refusal(400, err.message);
  return new Refusal(500, (err as Error).message);
}

/**
 * cluster-proxy's service proxy, in the proxy-agent pod: requests arrive from the user server
 * through the tunnel with the target in the `Cluster-Proxy-*` headers and go on to
 * `<proto>://<service>.<namespace>.svc:<port>`, or to the cluster's API server, where (with
 * impersonation on) the caller's token decides: the cluster's own token goes on as is, a hub
 * user's is exchanged for the agent's ServiceAccount token plus Impersonate-User/-Group.
 */
export async function startServiceProxy(opts: ServiceProxyOptions): Promise<ServiceProxy> {
  const log = opts.log ?? (() => undefined);
  const managed = new KubeClient(opts.cluster);
  const apiserver = new URL(opts.cluster.server);
  const serviceCas = [opts.cluster.caPem, ...(opts.serviceCaPems ?? [])];
  const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

  const route = async (req: http.IncomingMessage): Promise<{ hop: HopTarget; what: string }> => {
    const target = targetFromHeaders(req.headers);
    const headers = endToEndHeaders(req.headers);
    const path = req.url ?? '/';
    if (target.kind === 'kube-apiserver') {
      const who = opts.impersonation ? await authenticateCaller(opts, managed, headers) : 'not authenticated here';
      const hop: HopTarget = {
        protocol: 'https:',
        host: apiserver.hostname.replace(/^\[|\]$/g, ''),
        port: Number(apiserver.port || 443),
        path,
        headers,
        agent: agents.https,
        tls: { ca: opts.cluster.caPem },
      };
      return { hop, what: `kube-apiserver (${who})` };
    }
    const u = new URL(target.url);
    const https_ = u.protocol === 'https:';
    const hop: HopTarget = {
      protocol: https_ ? 'https:' : 'http:',
      host: u.hostname,
      port: Number(u.port),
      path,
      headers,
      agent: https_ ? agents.https : agents.http,
      ...(https_ ? { tls: { ca: serviceCas } } : {}),
    };
    return { hop, what: target.url };
  };

  const server = https.createServer({ cert: opts.serving.certPem, key: opts.serving.keyPem, ...nodeTlsOptions(opts.tlsProfile) }, (req, res) => {
    route(req).then(
      ({ hop, what }) => {
        res.on('finish', () => log(`${req.method} ${what} ${hop.path.split('?')[0]} → ${res.statusCode}`));
        forwardRequest(req, res, hop, (err) => res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' }).end(`${what}: ${err.message}\n`));
      },
      (err: unknown) => {
        const r = refusal(err);
        log(`${req.method} ${req.url?.split('?')[0]} → ${r.status}: ${r.message}`);
        res.writeHead(r.status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${r.message}\n`);
      },
    );
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    route(req).then(
      ({ hop, what }) => {
        log(`${req.method} ${what} ${hop.path.split('?')[0]} (upgrade ${String(req.headers.upgrade)})`);
        forwardUpgrade(req, socket, head, hop, (status, message) => socketError(socket, status, `${what}: ${message}`));
      },
      (err: unknown) => {
        const r = refusal(err);
        socketError(socket, r.status, r.message);
      },
    );
  });
  server.keepAliveTimeout = 100_000;
  const port = await listen(server, opts.port, opts.host ?? '127.0.0.1');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        managed.close();
        agents.http.destroy();
        agents.https.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
