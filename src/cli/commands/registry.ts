import type { CommandModule } from 'yargs';
import { NotFoundError } from '../../errors.js';
import { runtimeDefinitions } from '../../runtime/registry.js';
import type { ImageRegistryControl, ImageRegistryInfo } from '../../images/registry/control.js';
import { emit, type GlobalOptions } from '../output.js';

/** The image registry of the runtime that registers one (kind's). */
async function control(): Promise<ImageRegistryControl> {
  const load = (await runtimeDefinitions()).find((d) => d.imageRegistry)?.imageRegistry;
  if (!load) throw new Error('internal: no runtime registers an image registry');
  return load();
}

function renderRegistry(r: ImageRegistryInfo): string {
  return [
    `image registry ${r.container} (${r.running ? 'running' : "stopped: the next 'ocm-lab up' starts it"}), shared by every kind lab on this machine`,
    `  push to:        ${r.host}   e.g. docker tag my-addon:dev ${r.host}/my-addon:dev && docker push ${r.host}/my-addon:dev`,
    `  clusters pull:  ${r.host}/<image> (or ${r.hostFromClusters}/<image>) in a pod's image:; the lab's own images through it as a mirror`,
    `  cache:          Docker volume ${r.volume} (kept by 'ocm-lab down'; 'ocm-lab registry rm' removes it)`,
    `  networks:       ${r.networks.length ? r.networks.join(', ') : '(no lab up)'}`,
  ].join('\n');
}

const show: CommandModule<GlobalOptions, GlobalOptions> = {
  command: '$0',
  describe: 'print where to push images for the kind labs on this machine (-o json for scripts)',
  handler: async (argv) => {
    const r = await (await control()).show();
    if (!r) throw new NotFoundError('there is no image registry on this machine yet', { hint: "the first 'ocm-lab up --runtime kind' creates it" });
    emit(argv, r, renderRegistry);
  },
};

const rm: CommandModule<GlobalOptions, GlobalOptions> = {
  command: 'rm',
  describe: "remove the image registry and its volume (the image cache); the next 'ocm-lab up' makes a new one and pushes again",
  handler: async (argv) => {
    const removed = await (await control()).remove();
    emit(argv, { removed }, (x) => (x.removed.length ? `removed ${x.removed.join(', ')}` : 'there was no image registry'));
  },
};

const push: CommandModule<GlobalOptions, GlobalOptions & { images: string[] }> = {
  command: 'push <images..>',
  describe: "push images of this machine's Docker engine to the registry; pods of every kind lab run them by the same names",
  builder: (y) => y.positional('images', { type: 'string', array: true, demandOption: true, describe: 'image references, e.g. my-addon:dev' }),
  handler: async (argv) => {
    const pushed = await (await control()).push(argv.images.map(String));
    emit(argv, { images: pushed }, (x) =>
      x.images.map((i) => `${i.pushed ? 'pushed' : 'already there'}: ${i.image} (pods pull it as image: ${i.pullAs})`).join('\n'),
    );
  },
};

/** `ocm-lab registry [rm]`: the image registry every kind lab on the machine pulls from. */
export const registryCommand: CommandModule<GlobalOptions, GlobalOptions> = {
  command: 'registry [command]',
  describe: 'the image registry of the kind labs: where to push (registry), push to it (registry push), remove it and its cache (registry rm)',
  builder: (y) => y.command(show).command(rm).command(push),
  handler: () => undefined,
};
