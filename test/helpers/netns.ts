import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * An office LAN on this one machine: each host is a network namespace with its own eth0 and
 * address, plugged into a bridge that lives in a namespace of its own (the office switch). Only
 * private addresses, only inside namespaces made here, and everything removed by `destroy`.
 * `ip netns exec` also mounts /etc/netns/<name>/hosts over /etc/hosts: that is the office's DNS.
 */
export interface OfficeLan {
  /** The namespace of a host, for `ip netns exec`. */
  namespace(host: string): string;
  address(host: string): string;
  /** Runs a command inside a host's namespace and returns its stdout. */
  run(host: string, command: string, args: string[], options?: { env?: NodeJS.ProcessEnv; input?: string }): string;
  /** Starts a long-running command inside a host's namespace. */
  spawn(host: string, command: string, args: string[], env?: NodeJS.ProcessEnv): ChildProcess;
  /** Gives a host another address (its DHCP lease changed), dropping the old one. */
  readdress(host: string, address: string): void;
  /** What the office's DNS answers on every host: name → address. */
  setNames(names: Record<string, string>): void;
  destroy(): void;
}

/** Why namespaces cannot be made here, or null when they can (root and iproute2). */
export function namespacesUnavailable(): string | null {
  if (process.platform !== 'linux') return 'network namespaces are Linux only';
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  try {
    execFileSync('ip', ['-V'], { stdio: 'ignore' });
  } catch {
    return 'iproute2 (`ip`) is not installed: run scripts/install-lan-tools.sh';
  }
  return null;
}

function ip(args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** hosts: name → last octet on 10.<a>.<b>.0/24 (a subnet of its own per LAN, so that parallel files never meet). */
export function createOfficeLan(hosts: Record<string, number>): OfficeLan {
  const id = randomBytes(3).toString('hex');
  const subnet = `10.${100 + (parseInt(id.slice(0, 2), 16) % 100)}.${parseInt(id.slice(2, 4), 16)}`;
  const switchNs = `crt-sw-${id}`;
  const names = Object.keys(hosts);
  const namespaceOf = (host: string) => `crt-${host}-${id}`;
  const addresses = new Map(names.map((host) => [host, `${subnet}.${hosts[host] ?? 0}`]));
  const created: string[] = [];
  const destroy = () => {
    for (const ns of created) {
      try {
        ip(['netns', 'del', ns]);
      } catch {
        // already gone
      }
      rmSync(join('/etc/netns', ns), { recursive: true, force: true });
    }
  };
  try {
    ip(['netns', 'add', switchNs]);
    created.push(switchNs);
    ip(['-n', switchNs, 'link', 'add', 'br0', 'type', 'bridge']);
    ip(['-n', switchNs, 'link', 'set', 'br0', 'up']);
    names.forEach((host, i) => {
      const ns = namespaceOf(host);
      ip(['netns', 'add', ns]);
      created.push(ns);
      mkdirSync(join('/etc/netns', ns), { recursive: true });
      writeFileSync(join('/etc/netns', ns, 'hosts'), '127.0.0.1 localhost\n');
      const port = `p${i}`;
      ip(['-n', switchNs, 'link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
      ip(['-n', switchNs, 'link', 'set', port, 'master', 'br0', 'up']);
      ip(['-n', ns, 'addr', 'add', `${addresses.get(host)}/24`, 'dev', 'eth0']);
      ip(['-n', ns, 'link', 'set', 'eth0', 'up']);
      ip(['-n', ns, 'link', 'set', 'lo', 'up']);
      // A default route: multicast (mDNS) and anything else leaves by eth0, as on an office PC.
      ip(['-n', ns, 'route', 'add', 'default', 'dev', 'eth0']);
    });
  } catch (err) {
    destroy();
    throw err;
  }
  return {
    namespace: namespaceOf,
    address: (host) => addresses.get(host) ?? '',
    run(host, command, args, options = {}) {
      return execFileSync('ip', ['netns', 'exec', namespaceOf(host), command, ...args], {
        env: { ...process.env, ...options.env },
        input: options.input ?? '',
        encoding: 'utf8',
        stdio: ['pipe', 'pipe', 'pipe'],
      });
    },
    spawn(host, command, args, env = {}) {
      return spawn('ip', ['netns', 'exec', namespaceOf(host), command, ...args], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    },
    readdress(host, address) {
      const ns = namespaceOf(host);
      // Old one first: deleting a primary address also deletes the secondaries of its subnet.
      ip(['-n', ns, 'addr', 'del', `${addresses.get(host)}/24`, 'dev', 'eth0']);
      ip(['-n', ns, 'addr', 'add', `${address}/24`, 'dev', 'eth0']);
      ip(['-n', ns, 'route', 'replace', 'default', 'dev', 'eth0']);
      addresses.set(host, address);
    },
    setNames(table) {
      const lines = ['127.0.0.1 localhost', ...Object.entries(table).map(([name, address]) => `${address} ${name}`)].join('\n');
      // Written in place: the file mounted over /etc/hosts in running namespaces keeps its inode.
      for (const host of names) writeFileSync(join('/etc/netns', namespaceOf(host), 'hosts'), `${lines}\n`);
    },
    destroy,
  };
}

/** The LAN's subnet prefix of an address (10.a.b), to give a host a new address in the same /24. */
export function sameSubnet(address: string, lastOctet: number): string {
  return `${address.split('.').slice(0, 3).join('.')}.${lastOctet}`;
}
