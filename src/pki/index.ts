export { createCA, issueCertificate, type CertificateAuthority, type KeyPairPem } from './certificates.js';
export { certificateInfo, certificateUsages, isSignedBy } from './inspect.js';
export { createServiceAccountKeyPair, keyMatchesCertificate } from './keys.js';
export { loadCA, writePublicFile, writeSecretFile } from './files.js';
export { clusterPkiPaths, ensureClusterPki, issueClientCertFromFiles, type ClusterPkiPaths, type ClusterPkiSpec } from './cluster.js';
