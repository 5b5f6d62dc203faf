import { register } from 'node:module';

/** `node --import ocm-lab/addon-framework/register …`: installs the module hooks (see module-hooks.ts). */
register('./module-hooks.js', import.meta.url);
