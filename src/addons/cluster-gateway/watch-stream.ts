import type { ServerResponse } from 'node:http';
import type { GatewayEvent, GatewayStore } from './gateway-store.js';
import { presentObject, type Presentation } from './presentation.js';

export interface WatchRequest {
  /** Only this gateway (a named watch, or fieldSelector metadata.name=…). */
  name?: string;
  /** resourceVersion the client had; '' or '0' means "send the current state first". */
  resourceVersion: string;
  timeoutSeconds?: number;
  how: { presentation: Presentation; version: string };
}

/**
 * Streams watch events of ClusterGateways as newline-delimited JSON (the API server's
 * watch encoding) until the client goes, the timeout passes or the server stops.
 */
export function streamWatch(res: ServerResponse, store: GatewayStore, w: WatchRequest, stopSignal: AbortSignal): void {
  let since: bigint | null = null;
  if (w.resourceVersion && w.resourceVersion !== '0') {
    try {
      since = BigInt(w.resourceVersion);
    } catch {
      since = null;
    }
  }
  let first = true;
  const write = (e: Pick<GatewayEvent, 'type' | 'object'>) => {
    if (w.name && e.object.metadata.name !== w.name) return;
    res.write(`${JSON.stringify({ type: e.type, object: presentObject(e.object, w.how, first) })}\n`);
    first = false;
  };
  const subscription = store.watch(since, write);
  if (!subscription) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        type: 'ERROR',
        object: {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `too old resource version: ${w.resourceVersion}`,
          reason: 'Expired',
          code: 410,
        },
      }) + '\n',
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache, private' });
  res.flushHeaders();
  if (since === null) for (const gw of store.list()) write({ type: 'ADDED', object: gw });
  for (const e of subscription.replay) write(e);
  let timer: NodeJS.Timeout | undefined;
  const finish = () => {
    subscription.stop();
    clearTimeout(timer);
    stopSignal.removeEventListener('abort', finish);
    if (!res.writableEnded) res.end();
  };
  if (w.timeoutSeconds && w.timeoutSeconds > 0) timer = setTimeout(finish, w.timeoutSeconds * 1000);
  res.on('close', finish);
  stopSignal.addEventListener('abort', finish, { once: true });
}
