// Helper of scripts/runc-bounded: removes from an OCI spec (`spec FILE`, the
// bundle's config.json) or process (`process FILE`, runc exec --process) every
// capability that is not in this process's bounding set, in place.
import fs from 'node:fs';

// Capability numbers from linux/capability.h, in order.
const CAPS = [
  'CHOWN',
  'DAC_OVERRIDE',
  'DAC_READ_SEARCH',
  'FOWNER',
  'FSETID',
  'KILL',
  'SETGID',
  'SETUID',
  'SETPCAP',
  'LINUX_IMMUTABLE',
  'NET_BIND_SERVICE',
  'NET_BROADCAST',
  'NET_ADMIN',
  'NET_RAW',
  'IPC_LOCK',
  'IPC_OWNER',
  'SYS_MODULE',
  'SYS_RAWIO',
  'SYS_CHROOT',
  'SYS_PTRACE',
  'SYS_PACCT',
  'SYS_ADMIN',
  'SYS_BOOT',
  'SYS_NICE',
  'SYS_RESOURCE',
  'SYS_TIME',
  'SYS_TTY_CONFIG',
  'MKNOD',
  'LEASE',
  'AUDIT_WRITE',
  'AUDIT_CONTROL',
  'SETFCAP',
  'MAC_OVERRIDE',
  'MAC_ADMIN',
  'SYSLOG',
  'WAKE_ALARM',
  'BLOCK_SUSPEND',
  'AUDIT_READ',
  'PERFMON',
  'BPF',
  'CHECKPOINT_RESTORE',
];

const [mode, file] = process.argv.slice(2);
if ((mode !== 'spec' && mode !== 'process') || !file) {
  console.error('usage: runc-bounded-caps.mjs spec|process FILE');
  process.exit(2);
}
const status = fs.readFileSync('/proc/self/status', 'utf8');
const bounding = BigInt(`0x${/^CapBnd:\s*([0-9a-f]+)/m.exec(status)[1]}`);
const allowed = (cap) => {
  const bit = CAPS.indexOf(String(cap).replace(/^CAP_/, ''));
  return bit < 0 || ((bounding >> BigInt(bit)) & 1n) === 1n; // unknown names are runc's business
};

const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
const caps = mode === 'spec' ? doc.process?.capabilities : doc.capabilities;
if (caps) {
  let dropped = false;
  for (const set of Object.keys(caps)) {
    if (!Array.isArray(caps[set])) continue;
    const kept = caps[set].filter(allowed);
    dropped ||= kept.length !== caps[set].length;
    caps[set] = kept;
  }
  if (dropped) fs.writeFileSync(file, JSON.stringify(doc));
}
