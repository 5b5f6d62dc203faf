export { createCA, issueCertificate, type CertificateAuthority, type CertRequest, type CertUsage, type KeyPairPem } from './certificates.js';
export { certificateInfo, certificateUsages, isSignedBy, type CertificateInfo } from './inspect.js';
export { createServiceAccountKeyPair, keyMatchesCertificate } from './keys.js';
export { loadCA, writePublicFile, writeSecretFile } from './files.js';
export {
  clusterPkiPaths,
  ensureClusterPki,
  issueClientCertFromFiles,
  KUBELET_CLIENT_COMMON_NAME,
  type ClusterPkiPaths,
  type ClusterPkiSpec,
} from './cluster.js';
