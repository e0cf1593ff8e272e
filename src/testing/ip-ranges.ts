// Address ranges the services refuse as webhook targets (email-service §2 Webhook.url, crm-service §2
// Webhook.url: "internal, loopback and cloud-metadata addresses are refused").

type Ipv4Range = readonly [base: number, bits: number, label: string];

const IPV4_INTERNAL: readonly Ipv4Range[] = [
  [0x00000000, 8, 'this-network'],
  [0x0a000000, 8, 'private'],
  [0x64400000, 10, 'carrier-grade NAT'],
  [0x7f000000, 8, 'loopback'],
  [0xa9fe0000, 16, 'link-local / cloud metadata'],
  [0xac100000, 12, 'private'],
  [0xc0000000, 24, 'IETF protocol assignments'],
  [0xc0a80000, 16, 'private'],
  [0xc6120000, 15, 'benchmarking'],
  [0xe0000000, 4, 'multicast'],
  [0xf0000000, 4, 'reserved / broadcast'],
];

/** The dotted IPv4 as a 32-bit number, or null. `URL` has already normalised decimal/hex/octal forms. */
export function parseIpv4(host: string): number | null {
  const parts = host.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return null;
    value = value * 256 + Number(part);
  }
  return value;
}

/** Why an IPv4 address is internal, or null when it is public. */
export function ipv4Internal(address: number): string | null {
  for (const [base, bits, label] of IPV4_INTERNAL) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((address & mask) >>> 0 === base) return label;
  }
  return null;
}

/** The eight 16-bit groups of an IPv6 address (embedded dotted IPv4 allowed), or null. */
export function parseIpv6(host: string): number[] | null {
  let text = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (!text.includes(':')) return null;
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    const v4 = parseIpv4(tail[1]!);
    if (v4 === null) return null;
    text = `${text.slice(0, -tail[1]!.length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - rest.length;
  if ((halves.length === 1 && missing !== 0) || missing < 0) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return null;
  return groups.map((g) => Number.parseInt(g, 16));
}

/** Why an IPv6 address is internal, or null when it is public. */
export function ipv6Internal(g: readonly number[]): string | null {
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, h6 = 0, h7 = 0] = g;
  const embedded = ((h6 << 16) | h7) >>> 0;
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0) {
    if (f === 0 && h6 === 0 && h7 <= 1) return h7 === 1 ? 'loopback' : 'unspecified';
    // ::ffff:a.b.c.d (IPv4-mapped) and ::a.b.c.d (IPv4-compatible) reach the IPv4 address inside.
    if (f === 0xffff || f === 0) {
      if (embedded === 0xa9fea9fe) return 'cloud metadata';
      const inner = ipv4Internal(embedded);
      return `IPv4-mapped IPv6${inner ? ` of a ${inner} address` : ''}`;
    }
  }
  if (a === 0x64 && b === 0xff9b) return ipv4Internal(embedded) ? 'NAT64 of an internal IPv4' : null;
  if ((a & 0xfe00) === 0xfc00) return a === 0xfd00 && b === 0x0ec2 ? 'cloud metadata' : 'unique local';
  if ((a & 0xffc0) === 0xfe80) return 'link-local';
  if ((a & 0xffc0) === 0xfec0) return 'site-local';
  if ((a & 0xff00) === 0xff00) return 'multicast';
  return null;
}
