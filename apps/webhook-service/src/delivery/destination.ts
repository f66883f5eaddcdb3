import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** Resolves a host name to every address it has (the system resolver by default; tests pass their own). */
export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

/** Why a destination is refused before any connection is made: the URL or the address it resolves to. */
export class DestinationRefused extends Error {
  constructor(
    message: string,
    /** `url`: the URL itself; `address`: where it leads; `dns`: its host does not resolve (now). */
    readonly reason: 'url' | 'address' | 'dns' = 'url',
  ) {
    super(message);
    this.name = 'DestinationRefused';
  }
}

/**
 * Addresses a webhook must never reach unless private networks are allowed: this host, the
 * networks behind it, and the cloud metadata services. IPv4-mapped and NAT64 IPv6 addresses are
 * checked as the IPv4 address they carry.
 */
const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local (fd00:ec2::254 is a metadata address)
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address an IPv6 address carries (mapped `::ffff:a.b.c.d`, or NAT64 `64:ff9b::/96`), if any. */
function embeddedIPv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const high = parseInt(hex[1], 16);
  const low = parseInt(hex[2], 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** True when a webhook may connect to this IP address although private networks are not allowed. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !BLOCKED.check(address, 'ipv4');
  if (family !== 6) return false;
  const v4 = embeddedIPv4(address);
  if (v4 !== undefined) return !BLOCKED.check(v4, 'ipv4');
  return !BLOCKED.check(address, 'ipv6');
}

export interface DestinationPolicy {
  allowPrivateNetworks: boolean;
  resolve?: Resolver;
}

interface Destination {
  url: URL;
  /** The address the connection must go to: checked here, and pinned for the connection. */
  address: string;
  family: 4 | 6;
}

/** The URL's scheme and form, before any DNS: only http(s), and plain http only where private networks are allowed. */
export function checkUrl(raw: string, policy: DestinationPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DestinationRefused('the URL is not valid');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new DestinationRefused('only http and https URLs are allowed');
  }
  if (url.protocol === 'http:' && !policy.allowPrivateNetworks) {
    throw new DestinationRefused('the URL must use https');
  }
  if (url.username || url.password) throw new DestinationRefused('the URL must not carry credentials');
  return url;
}

/**
 * Where a delivery to `raw` may connect: the URL checked, its host resolved, and every address it
 * resolves to checked (one private answer among public ones refuses it: the resolver's order is not
 * ours to trust). The caller connects to the address answered here and nowhere else, so a second
 * DNS answer (DNS rebinding) cannot redirect the connection.
 */
export async function resolveDestination(raw: string, policy: DestinationPolicy): Promise<Destination> {
  const url = checkUrl(raw, policy);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await (policy.resolve ?? systemResolver)(host);
    } catch (error) {
      const code = (error as { code?: string }).code ?? 'error';
      throw new DestinationRefused(`${host} does not resolve (${code})`, 'dns');
    }
  }
  if (addresses.length === 0) throw new DestinationRefused(`${host} does not resolve`, 'dns');
  if (!policy.allowPrivateNetworks) {
    const refused = addresses.find(({ address }) => !isPublicAddress(address));
    if (refused) {
      throw new DestinationRefused(
        `${host} resolves to ${refused.address}, a loopback, private, link-local or metadata address`,
        'address',
      );
    }
  }
  const [first] = addresses;
  return { url, address: first.address, family: isIP(first.address) === 6 ? 6 : 4 };
}
