export { cleanupContainers, listContainers, runcAt } from './runc.js';
