export {
  certificateInfo,
  createCA,
  createServiceAccountKeyPair,
  issueCertificate,
  type CertificateAuthority,
  type CertificateInfo,
  type CertRequest,
  type KeyPairPem,
} from './certificates.js';
export { loadCA, writePublicFile, writeSecretFile } from './files.js';
export { clusterPkiPaths, ensureClusterPki, issueClientCertFromFiles, type ClusterPkiPaths, type ClusterPkiSpec } from './cluster.js';
