import type { CommandModule } from 'yargs';
import { proxyServerCommand } from './proxy-server.js';
import { proxyAgentCommand } from './proxy-agent.js';
import { nodeletCommand } from './nodelet.js';
import { testWorkloadCommand } from './test-workload.js';

/**
 * Subcommands of `ocm-lab internal`: entry points the lab itself starts as
 * processes (tunnel server and agent, nodelet, addon managers). Not for people.
 */
export const internalCommands: CommandModule<any, any>[] = [proxyServerCommand, proxyAgentCommand, nodeletCommand, testWorkloadCommand];
