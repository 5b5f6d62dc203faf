export { cleanupContainers, runcAt } from './runc.js';
