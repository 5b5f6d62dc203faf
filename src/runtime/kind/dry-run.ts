import type { KindLabPlan } from './plan.js';

/**
 * `up --dry-run` as text: what would be created, in the order `up` creates it, on `engine` (its title: Docker, Podman).
 * Nothing here touches the machine.
 */
export function renderKindPlan(plan: KindLabPlan, action: 'up' | 'down' = 'up', engine = 'Docker'): string {
  const out: string[] = [];
  const verb = action === 'up' ? 'would create (or keep, when it already exists)' : 'would remove (when it exists)';
  out.push(`lab '${plan.lab}' on kind (Kubernetes ${plan.kubernetesVersion}): ${verb}`);
  out.push('');
  out.push(`${engine} networks (one per VPC):`);
  for (const n of plan.networks) {
    out.push(`  ${n.name}  vpc=${n.vpc}  subnet=${n.subnet ?? `chosen by ${engine}`}${n.gateway ? `  gateway=${n.gateway}` : ''}`);
    out.push(
      `    labels: ${Object.entries(n.labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')}`,
    );
  }
  out.push('');
  out.push(`kind clusters (node image ${plan.nodeImage}; pods attached by the ${plan.podNetwork} CNI plugin, kind's own CNI disabled):`);
  for (const c of plan.clusters) {
    out.push(`  ${c.kindName}  cluster=${c.name}${c.hub ? ' (hub)' : ''}  network=${c.network}  node=${c.nodeContainer}`);
    out.push(`    reached from the lab at ${c.internalServer}; blackhole routes: ${c.blackholes.join(', ')}; rejected after DNAT: ${c.rejected.join(', ')}`);
    out.push(`    CNI plugins the node runs: ${c.cniPlugins.join(', ')}`);
  }
  out.push('');
  const e = plan.hubEndpoint;
  out.push('Containers:');
  out.push(`  ${e.name}  image=${e.image}  networks=${e.networks.join(', ')}`);
  out.push(`    forwards ${e.forwards.map((f) => `${f.port} -> ${f.target}`).join(', ')}`);
  out.push(`    command: ${e.command.join(' ')}`);
  out.push('');
  const r = plan.imageRegistry;
  out.push(`Image registry (one per machine, kept by down): ${r.name}  volume=${r.volume}  published on 127.0.0.1:<port>  networks=${r.networks.join(', ')}`);
  out.push(`  every node pulls localhost:<port>/… and ${r.name}:5000/… from it, and ${r.mirrors.join(', ') || '(none)'} from it first, then upstream`);
  out.push(`  pushed when the registry lacks them: ${plan.images.length ? plan.images.join(', ') : '(none)'}`);
  out.push('  every cluster: ConfigMap kube-public/local-registry-hosting (KEP-1755)');
  out.push('');
  out.push(`Files in ${plan.labDir}: kubeconfig, clusters/<name>/kubeconfigs/admin.kubeconfig, clusters/<name>/kind/{kind-config.yaml,cni.conflist}`);
  if (action === 'up') {
    for (const c of plan.clusters) {
      out.push('');
      out.push(`--- ${c.kindConfigFile}`);
      out.push(c.kindConfig.trimEnd());
      out.push('');
      out.push(`--- ${c.cniConflistFile} (on one line here)`);
      out.push(JSON.stringify(JSON.parse(c.cniConflist)));
    }
  }
  return out.join('\n');
}
