import { classifyAddress, egressRefusal, parseEgressAllow, type Destination } from '../../core/egress/egressRules';

// The egress guard's pure half: which addresses are refused, and what SHIPYARD_EGRESS_ALLOW
// entries let through.

const at = (address: string, port = 80, host = address): Destination => ({ host, port, address });
const verdict = (entries: string[], destination: Destination) =>
  egressRefusal(parseEgressAllow(entries), destination) ?? 'allowed';

describe('classification', () => {
  test.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
  ])('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  test.each([
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
    ['2002:7f00:1::', 'loopback'],
  ])('the IPv6 form %s of an IPv4 address is %s like the address it reaches', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  test.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '169.255.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ])('%s is public', (address) => {
    expect(classifyAddress(address)).toBeUndefined();
  });
});

describe('allow-list', () => {
  test('a refusal names the address, why, and the setting that allows it; a host name shows the address it resolved to', () => {
    expect(verdict([], at('127.0.0.1'))).toBe(
      'egress refused: 127.0.0.1 is a loopback address (allow it with SHIPYARD_EGRESS_ALLOW)',
    );
    expect(verdict([], at('10.0.0.5', 443, 'ci.internal'))).toBe(
      'egress refused: ci.internal (10.0.0.5) is a private address (allow it with SHIPYARD_EGRESS_ALLOW)',
    );
    expect(verdict([], at('fd00:ec2::254', 80, 'fd00:ec2::254'))).toMatch(/fd00:ec2::254 is a cloud metadata address/);
  });

  test('public addresses pass whatever the list says', () => {
    expect(verdict([], at('8.8.8.8', 443, 'dns.google'))).toBe('allowed');
    expect(verdict(['127.0.0.77:8080'], at('2606:4700::1111', 1234))).toBe('allowed');
  });

  test('an address allows that address only: 127.0.0.77 allowed, 127.0.0.1 still refused', () => {
    expect(verdict(['127.0.0.77'], at('127.0.0.77', 38211))).toBe('allowed');
    expect(verdict(['127.0.0.77'], at('127.0.0.1', 38211))).toMatch(
      /^egress refused: 127\.0\.0\.1 is a loopback address/,
    );
  });

  test('an allowed IPv4 address is also allowed in its IPv4-mapped IPv6 form, and the reverse', () => {
    expect(verdict(['127.0.0.77'], at('::ffff:127.0.0.77'))).toBe('allowed');
    expect(verdict(['::ffff:127.0.0.77'], at('127.0.0.77'))).toBe('allowed');
    expect(verdict(['127.0.0.77'], at('::ffff:127.0.0.1'))).toMatch(/loopback/);
  });

  test('a CIDR range allows every address inside it and nothing outside', () => {
    expect(verdict(['10.0.0.0/8'], at('10.200.3.4'))).toBe('allowed');
    expect(verdict(['10.0.0.0/8'], at('192.168.1.1'))).toMatch(/private/);
    expect(verdict(['fc00::/7'], at('fd12::1'))).toBe('allowed');
    expect(verdict(['fc00::/7'], at('fe80::1'))).toMatch(/link-local/);
  });

  test('a host name allows whatever it resolves to, by that name only, in any case and with a trailing dot', () => {
    expect(verdict(['ci.internal'], at('10.0.0.5', 443, 'ci.internal'))).toBe('allowed');
    expect(verdict(['CI.Internal.'], at('10.0.0.5', 443, 'ci.internal.'))).toBe('allowed');
    expect(verdict(['ci.internal'], at('10.0.0.5', 443, 'other.internal'))).toMatch(
      /other\.internal \(10\.0\.0\.5\) is a private address/,
    );
    expect(verdict(['ci.internal'], at('10.0.0.5'))).toMatch(/private/);
  });

  test('an entry with a port allows that port only', () => {
    expect(verdict(['127.0.0.77:8080'], at('127.0.0.77', 8080))).toBe('allowed');
    expect(verdict(['127.0.0.77:8080'], at('127.0.0.77', 8081))).toMatch(/loopback/);
    expect(verdict(['ci.internal:8443'], at('10.0.0.5', 8443, 'ci.internal'))).toBe('allowed');
    expect(verdict(['ci.internal:8443'], at('10.0.0.5', 443, 'ci.internal'))).toMatch(/private/);
    expect(verdict(['10.0.0.0/8:443'], at('10.9.9.9', 443))).toBe('allowed');
    expect(verdict(['10.0.0.0/8:443'], at('10.9.9.9', 80))).toMatch(/private/);
  });

  test('IPv6 entries: bare without a port, in brackets with one', () => {
    expect(verdict(['::1'], at('::1', 9000))).toBe('allowed');
    expect(verdict(['[::1]:9000'], at('::1', 9000))).toBe('allowed');
    expect(verdict(['[::1]:9000'], at('::1', 9001))).toMatch(/loopback/);
    expect(verdict(['[fd00::/8]:443'], at('fd00::7', 443))).toBe('allowed');
    expect(verdict(['[fd00::/8]:443'], at('fd00::7', 80))).toMatch(/private/);
    expect(verdict(['[::1]'], at('::1'))).toBe('allowed');
  });

  test.each([
    [
      'http://ci.internal',
      /"http:\/\/ci\.internal" is not a host name, IP address or CIDR range \(each optionally with :port\)/,
    ],
    ['ci.internal/8', /"ci\.internal\/8" is not a CIDR range/],
    ['10.0.0.0/33', /"10\.0\.0\.0\/33" is not a CIDR range .* up to 32/],
    ['fc00::/129', /"fc00::\/129" is not a CIDR range .* up to 128/],
    ['10.0.0.0/8/1', /"10\.0\.0\.0\/8\/1" is not a CIDR range/],
    ['10.0.0.0/x', /"10\.0\.0\.0\/x" is not a CIDR range/],
    ['ci.internal:0', /"ci\.internal:0" has an invalid port 0 \(1-65535\)/],
    ['ci.internal:70000', /"ci\.internal:70000" has an invalid port 70000/],
    ['ci.internal:', /"ci\.internal:" is not a host name/],
    [':8080', /":8080" is not a host name, IP address or CIDR range/],
    ['*.internal', /"\*\.internal" is not a host name/],
    ['ci_internal!', /is not a host name/],
    ['10.0.0', /"10\.0\.0" is not a host name/],
    ['300.1.1.1', /"300\.1\.1\.1" is not a host name/],
    ['[ci.internal]:80', /"\[ci\.internal\]:80" has brackets around something that is not an IPv6 address/],
    ['[127.0.0.1]:80', /has brackets around something that is not an IPv6 address/],
    ['[::1]9000', /"\[::1\]9000" is not a host name/],
  ])('a bad entry stops parsing with a message naming it: %s', (entry, message) => {
    expect(() => parseEgressAllow(['127.0.0.77', entry])).toThrow(message);
    expect(() => parseEgressAllow(['127.0.0.77', entry])).toThrow(/^SHIPYARD_EGRESS_ALLOW: /);
  });
});
