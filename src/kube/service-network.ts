/** The Service range of every cluster the local runtime makes, and the `kubernetes` Service's ClusterIP in it. */
export const SERVICE_CIDR = '10.96.0.0/16';
export const SERVICE_IP = '10.96.0.1';
