import { BlockList, isIP } from 'node:net';

// The egress guard decides where an outbound request made for a tenant may go: public
// addresses, plus what SHIPYARD_EGRESS_ALLOW names. This file is its pure half: parsing the
// allow-list and classifying addresses. ./egressClient.ts resolves, checks and connects.

/** `text` as an absolute http(s) URL (resolved against `base` when given), or undefined. */
export function parseHttpUrl(text: string, base?: URL): URL | undefined {
  const url = URL.canParse(text, base?.href) ? new URL(text, base) : undefined;
  return url?.protocol === 'http:' || url?.protocol === 'https:' ? url : undefined;
}

/** Why an address is not public. */
export type AddressClass =
  'loopback' | 'private' | 'link-local' | 'metadata' | 'multicast' | 'unspecified' | 'broadcast' | 'reserved';

const DESCRIPTION: Record<AddressClass, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  'link-local': 'a link-local address',
  metadata: 'a cloud metadata address',
  multicast: 'a multicast address',
  unspecified: 'an unspecified address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
};

const blockListOf = (cidrs: string[]): BlockList => {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [network, prefix] = cidr.split('/');
    list.addSubnet(network, Number(prefix), isIP(network) === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
};

// First match wins: the metadata addresses sit inside the link-local and private ranges.
const REFUSED_RANGES: [AddressClass, BlockList][] = [
  ['metadata', blockListOf(['169.254.169.254/32', 'fd00:ec2::254/128'])],
  ['loopback', blockListOf(['127.0.0.0/8', '::1/128'])],
  ['unspecified', blockListOf(['0.0.0.0/8', '::/128'])],
  ['broadcast', blockListOf(['255.255.255.255/32'])],
  // 100.64/10 is carrier-grade NAT; fec0::/10 the deprecated site-local; 64:ff9b:1::/48 a
  // network's own NAT64 prefix, which translates to its private IPv4 space.
  [
    'private',
    blockListOf([
      '10.0.0.0/8',
      '172.16.0.0/12',
      '192.168.0.0/16',
      '100.64.0.0/10',
      'fc00::/7',
      'fec0::/10',
      '64:ff9b:1::/48',
    ]),
  ],
  ['link-local', blockListOf(['169.254.0.0/16', 'fe80::/10'])],
  ['multicast', blockListOf(['224.0.0.0/4', 'ff00::/8'])],
  // Protocol assignments, documentation, benchmarking, the old 6to4 relay, class E; IPv6's
  // deprecated IPv4-compatible form, discard-only and documentation prefixes.
  [
    'reserved',
    blockListOf([
      '192.0.0.0/24',
      '192.0.2.0/24',
      '192.88.99.0/24',
      '198.18.0.0/15',
      '198.51.100.0/24',
      '203.0.113.0/24',
      '240.0.0.0/4',
      '::/96',
      '100::/64',
      '2001:db8::/32',
    ]),
  ],
];

/** The eight 16-bit words of a valid IPv6 address (a trailing dotted quad included). */
function ipv6Words(address: string): number[] {
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  const text = quad
    ? `${address.slice(0, quad.index)}${((+quad[1] << 8) | +quad[2]).toString(16)}:${((+quad[3] << 8) | +quad[4]).toString(16)}`
    : address;
  const words = (part: string) => (part ? part.split(':').map((word) => parseInt(word, 16)) : []);
  const [head, tail] = text.split('::');
  if (tail === undefined) return words(head);
  const [before, after] = [words(head), words(tail)];
  return [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
}

const ipv4Of = (high: number, low: number) => [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');

/**
 * The IPv4 address an IPv6 one carries, where the network delivers it to that IPv4 address:
 * IPv4-mapped (::ffff:a.b.c.d), the well-known NAT64 prefix (64:ff9b::/96) and 6to4 (2002::/16).
 */
function embeddedIpv4(words: number[]): string | undefined {
  if (words.slice(0, 5).every((word) => word === 0) && words[5] === 0xffff) return ipv4Of(words[6], words[7]);
  if (words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((word) => word === 0))
    return ipv4Of(words[6], words[7]);
  if (words[0] === 0x2002) return ipv4Of(words[1], words[2]);
  return undefined;
}

/**
 * An address as the guard compares it: without an IPv6 zone (`%eth0`), and an IPv4-mapped IPv6
 * address as the IPv4 address it is (a socket to ::ffff:127.0.0.1 reaches 127.0.0.1).
 */
export function canonicalAddress(address: string): string {
  const bare = address.replace(/%.*$/, '');
  if (isIP(bare) !== 6) return bare;
  const words = ipv6Words(bare);
  return words.slice(0, 5).every((word) => word === 0) && words[5] === 0xffff
    ? ipv4Of(words[6], words[7])
    : bare.toLowerCase();
}

/** Why `address` is not public, or undefined for a public address. IPv6 forms of IPv4 addresses count as those. */
export function classifyAddress(address: string): AddressClass | undefined {
  const ip = canonicalAddress(address);
  const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
  const found = REFUSED_RANGES.find(([, ranges]) => ranges.check(ip, family));
  if (found) return found[0];
  const carried = family === 'ipv6' ? embeddedIpv4(ipv6Words(ip)) : undefined;
  return carried === undefined ? undefined : classifyAddress(carried);
}

interface AllowEntry {
  /** A host name, compared with the request URL's host… */
  host?: string;
  /** …or addresses and ranges, compared with each address the host resolves to. */
  addresses?: BlockList;
  /** Only on this port, when given. */
  port?: number;
}

/** SHIPYARD_EGRESS_ALLOW, parsed once per process. */
export interface EgressAllowList {
  readonly entries: readonly AllowEntry[];
}

const HOST_NAME = /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

const notAnEntry = (entry: string) =>
  new Error(
    `SHIPYARD_EGRESS_ALLOW: "${entry}" is not a host name, IP address or CIDR range (each optionally with :port)`,
  );

/** `127.0.0.77`, `10.0.0.0/8`, `fc00::/7` or `ci.internal` (a port already split off) → what it allows. */
function allowedTarget(text: string, entry: string): Pick<AllowEntry, 'host' | 'addresses'> {
  const [address, prefix, extra] = text.split('/');
  const family = isIP(address);
  if (prefix !== undefined) {
    const bits = Number(prefix);
    const most = family === 6 ? 128 : 32;
    if (!family || extra !== undefined || !/^\d+$/.test(prefix) || bits > most) {
      throw new Error(
        `SHIPYARD_EGRESS_ALLOW: "${entry}" is not a CIDR range (an address, "/" and a prefix length up to ${most})`,
      );
    }
    const addresses = new BlockList();
    addresses.addSubnet(address, bits, family === 6 ? 'ipv6' : 'ipv4');
    return { addresses };
  }
  if (family) {
    const addresses = new BlockList();
    const ip = canonicalAddress(address);
    addresses.addAddress(ip, isIP(ip) === 6 ? 'ipv6' : 'ipv4');
    return { addresses };
  }
  const host = text.toLowerCase().replace(/\.$/, '');
  // An all-numeric last label is a mistyped address (`10.0.0`), not a host name.
  if (!HOST_NAME.test(host) || /(^|\.)\d+$/.test(host)) throw notAnEntry(entry);
  return { host };
}

function portOf(text: string, entry: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text)) throw notAnEntry(entry);
  if (port < 1 || port > 65535)
    throw new Error(`SHIPYARD_EGRESS_ALLOW: "${entry}" has an invalid port ${text} (1-65535)`);
  return port;
}

/**
 * Parses the allow-list: host names, IP addresses or CIDR ranges, each optionally with a port
 * (`127.0.0.77`, `127.0.0.77:8080`, `10.0.0.0/8`, `ci.internal:8443`, `[::1]:9000`, `fc00::/7`;
 * an IPv6 address with a port goes in brackets). Throws on the first bad entry, naming it.
 */
export function parseEgressAllow(entries: readonly string[]): EgressAllowList {
  return {
    entries: entries.map((raw): AllowEntry => {
      const entry = raw.trim();
      const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(entry);
      if (bracketed) {
        const [inside, port] = [bracketed[1], bracketed[2]];
        if (isIP(inside.split('/')[0]) !== 6) {
          throw new Error(
            `SHIPYARD_EGRESS_ALLOW: "${entry}" has brackets around something that is not an IPv6 address`,
          );
        }
        return { ...allowedTarget(inside, entry), ...(port !== undefined && { port: portOf(port, entry) }) };
      }
      // Two colons or more: a bare IPv6 address or range, which cannot carry a port.
      const colons = entry.split(':').length - 1;
      if (colons !== 1) return allowedTarget(entry, entry);
      const [target, port] = entry.split(':');
      return { ...allowedTarget(target, entry), port: portOf(port, entry) };
    }),
  };
}

/** One place a request would connect to: the URL's host (no brackets) and port, and one address it resolved to. */
export interface Destination {
  host: string;
  port: number;
  address: string;
}

/** Whether an allow-list entry lets the request reach `destination`. */
function isAllowed(allow: EgressAllowList, { host, port, address }: Destination): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  const ip = canonicalAddress(address);
  const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
  return allow.entries.some(
    (entry) =>
      (entry.port === undefined || entry.port === port) &&
      (entry.host === name || entry.addresses?.check(ip, family) === true),
  );
}

/**
 * Why the guard refuses `destination`, as a sentence for the step's error, or undefined when it
 * may be reached: a public address, or one the allow-list names (by host, address or range, and
 * port when the entry gives one).
 */
export function egressRefusal(allow: EgressAllowList, destination: Destination): string | undefined {
  const addressClass = classifyAddress(destination.address);
  if (addressClass === undefined || isAllowed(allow, destination)) return undefined;
  const { host, address } = destination;
  const what = isIP(host) ? host : `${host} (${address})`;
  return `egress refused: ${what} is ${DESCRIPTION[addressClass]} (allow it with SHIPYARD_EGRESS_ALLOW)`;
}
