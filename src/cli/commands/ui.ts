import fs from 'node:fs/promises';
import path from 'node:path';
import type { CommandModule } from 'yargs';
import { loadLabConfig, type LabConfig } from '../../config/index.js';
import { hubAdminKubeconfig } from '../../config/defaults.js';
import { KubeClient } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import { labStatus } from '../../lab/lifecycle.js';
import { clusterKubeconfigFile } from '../../paths.js';
import { DEFAULT_SCENARIO_DIR, listScenarios } from '../../scenario/index.js';
import type { GlobalOptions } from '../output.js';
import { startUiServer, type UiEvent, type UiSources } from '../ui-server.js';

type Args = GlobalOptions & { port: number; dir?: string; transcripts: string };

/**
 * The same value for `ms` after it was made (every poll of every open page would otherwise probe every tunnel),
 * until `reset` says the lab changed.
 */
function cached<T>(ms: number, make: () => Promise<T>): (() => Promise<T>) & { reset: () => void } {
  let last: { at: number; value: Promise<T> } | null = null;
  const read = () => {
    if (!last || Date.now() - last.at > ms) last = { at: Date.now(), value: make() };
    return last.value;
  };
  return Object.assign(read, { reset: () => (last = null) });
}

/** What the picture draws that the hub knows of: a change to one of these redraws it at the page's next poll. */
const WATCHED_ON_HUB = ['/apis/cluster.open-cluster-management.io/v1/managedclusters', '/apis/addon.open-cluster-management.io/v1alpha1/managedclusteraddons'];

/** Watches the hub (when the lab has one up) and calls `changed` on every change after the first list; resolves to a stop. */
async function watchHub(config: LabConfig, changed: () => void): Promise<() => Promise<void>> {
  const hub = await KubeClient.fromKubeconfig(hubAdminKubeconfig(config)).catch(() => null);
  if (!hub) return async () => undefined;
  const informers = WATCHED_ON_HUB.map((p) => new Informer<{ metadata: { name: string; namespace?: string } }>(hub, p, () => undefined));
  for (const informer of informers) {
    informer.onEvent(() => informer.hasSynced() && changed());
    informer.start();
  }
  return async () => {
    await Promise.all(informers.map((i) => i.stop()));
    hub.close();
  };
}

interface KubeEvent {
  type?: string;
  reason?: string;
  message?: string;
  lastTimestamp?: string | null;
  eventTime?: string | null;
  metadata?: { creationTimestamp?: string };
  involvedObject?: { kind?: string; name?: string; namespace?: string };
}

async function clusterEvents(config: LabConfig, cluster: string): Promise<UiEvent[]> {
  const client = await KubeClient.fromKubeconfig(clusterKubeconfigFile(config.name, cluster));
  try {
    const list = await client.get<{ items?: KubeEvent[] }>('/api/v1/events', { limit: 200 });
    return (list.items ?? [])
      .map((e) => ({
        time: e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp ?? '',
        type: e.type ?? '',
        reason: e.reason ?? '',
        object: `${e.involvedObject?.kind ?? ''} ${e.involvedObject?.namespace ? `${e.involvedObject.namespace}/` : ''}${e.involvedObject?.name ?? ''}`.trim(),
        message: e.message ?? '',
      }))
      .sort((a, b) => b.time.localeCompare(a.time))
      .slice(0, 20);
  } finally {
    client.close();
  }
}

function labSources(config: LabConfig, dir: string, transcripts: string): UiSources & { labChanged: () => void } {
  const status = cached(10_000, () => labStatus(config));
  const documents = async () =>
    Promise.all(
      (await listScenarios(dir)).map(async (s) => ({
        name: s.name,
        title: s.title,
        summary: s.summary,
        transcript: await fs.access(path.join(transcripts, `${s.name}.html`)).then(
          () => true,
          () => false,
        ),
      })),
    );
  const picture = cached(10_000, async () => {
    const [{ gatherLabPicture }, { labPictureSvg }] = await Promise.all([import('../../lab/picture-model.js'), import('../../lab/picture.js')]);
    return labPictureSvg(await gatherLabPicture(config, await status()));
  });
  return {
    picture,
    labChanged: () => {
      status.reset();
      picture.reset();
    },
    documents,
    transcript: async (name) => {
      if (!(await documents()).some((d) => d.name === name && d.transcript)) return null;
      return fs.readFile(path.join(transcripts, `${name}.html`), 'utf8');
    },
    events: cached(5_000, async () => {
      const s = await status();
      if (!s.exists) return {};
      const entries = await Promise.all(s.clusters.map(async (c) => [c.name, await clusterEvents(config, c.name).catch(() => [])] as const));
      return Object.fromEntries(entries);
    }),
  };
}

export const uiCommand: CommandModule<GlobalOptions, Args> = {
  command: 'ui',
  describe:
    'a local web page of the lab (127.0.0.1, a random token in its URL): its picture kept live, ' +
    "the documents and their last transcripts, each cluster's events",
  builder: (y) =>
    y
      .option('port', { type: 'number', default: 0, describe: 'port on 127.0.0.1 (default: a free one)' })
      .option('dir', { type: 'string', describe: `folder of documents (default: ${DEFAULT_SCENARIO_DIR})` })
      .option('transcripts', { type: 'string', default: 'transcripts', describe: 'folder where scenario run/conformance --transcript wrote the transcripts' }),
  handler: async (argv) => {
    const config = await loadLabConfig(argv.config);
    const sources = labSources(config, argv.dir ?? DEFAULT_SCENARIO_DIR, argv.transcripts);
    const server = await startUiServer(sources, { port: argv.port });
    const stopWatching = await watchHub(config, sources.labChanged);
    process.stdout.write(`ocm-lab ui of lab '${config.name}': ${server.url}\n(Ctrl-C stops it)\n`);
    await new Promise<void>((resolve) => {
      const stop = () => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        void Promise.all([server.close(), stopWatching()]).then(() => resolve());
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
  },
};
