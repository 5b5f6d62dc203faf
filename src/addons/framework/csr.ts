import { x509 } from '../../pki/x509.js';
import { ADDON_NAME_LABEL, agentSubject, CLUSTER_NAME_LABEL, clusterAgentUserPrefix, KUBE_CLIENT_SIGNER } from './names.js';

export interface CertificateSigningRequest {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { request: string; signerName: string; username?: string; usages?: string[] };
  status?: { conditions?: { type: string; status: string }[]; certificate?: string };
}

export type CsrDecision = { approve: true } | { approve: false; why: string };

function subjectOf(requestBase64: string): { cn: string; orgs: string[] } {
  const csr = new x509.Pkcs10CertificateRequest(Buffer.from(requestBase64, 'base64').toString('utf8'));
  const name = csr.subjectName;
  return { cn: name.getField('CN')[0] ?? '', orgs: name.getField('O') };
}

/**
 * Whether an addon manager approves a CSR: it must be for this addon's hub
 * client certificate, asked for by the klusterlet of the cluster it names,
 * and carry exactly the subject the manager published for that cluster.
 * Anything else is left for someone else to judge (never denied).
 */
export function decideAddonCsr(csr: CertificateSigningRequest, addon: string): CsrDecision {
  if (csr.status?.conditions?.some((c) => c.type === 'Approved' || c.type === 'Denied')) return { approve: false, why: 'already decided' };
  if (csr.metadata.labels?.[ADDON_NAME_LABEL] !== addon) return { approve: false, why: `not labelled ${ADDON_NAME_LABEL}=${addon}` };
  const cluster = csr.metadata.labels?.[CLUSTER_NAME_LABEL];
  if (!cluster) return { approve: false, why: `no ${CLUSTER_NAME_LABEL} label` };
  if (csr.spec.signerName !== KUBE_CLIENT_SIGNER) return { approve: false, why: `signer ${csr.spec.signerName} is not ${KUBE_CLIENT_SIGNER}` };
  if (!csr.spec.username?.startsWith(clusterAgentUserPrefix(cluster)))
    return { approve: false, why: `requested by ${csr.spec.username ?? 'nobody'}, not by cluster ${cluster}'s agent` };
  let subject: { cn: string; orgs: string[] };
  try {
    subject = subjectOf(csr.spec.request);
  } catch (err) {
    return { approve: false, why: `request does not parse: ${(err as Error).message}` };
  }
  const want = agentSubject(cluster, addon);
  if (subject.cn !== want.user) return { approve: false, why: `subject CN ${subject.cn} is not ${want.user}` };
  const extra = subject.orgs.filter((o) => !want.groups.includes(o));
  if (extra.length) return { approve: false, why: `subject asks for groups ${extra.join(', ')}` };
  return { approve: true };
}
