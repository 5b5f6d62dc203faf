import { InvalidInputError } from '../../errors.js';

function ipToInt(ip: string): number {
  return ip.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

function intToIp(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

const CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

/**
 * The addresses of a cluster's pod range, handed out in turn (the next free one after
 * the last given, wrapping), so an address that was just released is not reused at
 * once. The first and last address of the range are never given out.
 */
export class PodAddressPool {
  private readonly first: number;
  private readonly last: number;
  private readonly used = new Set<number>();
  private cursor: number;

  constructor(readonly cidr: string) {
    const m = CIDR.exec(cidr);
    const prefix = Number(m?.[5]);
    if (!m || m.slice(1, 5).some((o) => Number(o) > 255) || prefix > 30) {
      throw new InvalidInputError(`pod range '${cidr}' is not an IPv4 CIDR with room for pods (a /30 or larger)`);
    }
    const size = 2 ** (32 - prefix);
    const base = ipToInt(m.slice(1, 5).join('.'));
    this.first = base - (base % size) + 1;
    this.last = base - (base % size) + size - 2;
    this.cursor = this.last;
  }

  get capacity(): number {
    return this.last - this.first + 1;
  }

  contains(ip: string): boolean {
    const n = ipToInt(ip);
    return /^\d{1,3}(\.\d{1,3}){3}$/.test(ip) && n >= this.first && n <= this.last;
  }

  /** Marks an address as taken (found on a pod that already exists); false when it is not in the range. */
  reserve(ip: string): boolean {
    if (!this.contains(ip)) return false;
    const n = ipToInt(ip);
    this.used.add(n);
    this.cursor = this.used.size === 1 ? n : Math.max(this.cursor, n);
    return true;
  }

  allocate(): string {
    for (let i = 1; i <= this.capacity; i++) {
      const n = this.first + ((this.cursor - this.first + i) % this.capacity);
      if (!this.used.has(n)) {
        this.used.add(n);
        this.cursor = n;
        return intToIp(n);
      }
    }
    throw new Error(`pod range ${this.cidr} is full: all ${this.capacity} addresses are in use`);
  }

  release(ip: string): void {
    if (this.contains(ip)) this.used.delete(ipToInt(ip));
  }
}
