/**
 * Hosts of a test's own on one machine: a network namespace each, with two links. The "cluster"
 * link joins a bridge shared with the other hosts and with the root namespace (where the test's
 * forwarders to PostgreSQL and Redis listen); the "client" link is a pair of its own to the root
 * namespace, for the test's load to reach the host's gateway. A partition takes one host's cluster
 * link down: packets to and from the host are dropped, nothing is refused, and its processes still
 * reach each other and answer clients.
 *
 * Every namespace and link is named with one random prefix, and `destroy()` removes exactly those.
 * Needs root and iproute2.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

export interface NetworkHost {
  /** 1, 2, 3... */
  index: number;
  /** The network namespace its processes run in. */
  netns: string;
  /** Its address on the cluster link: NATS listens there, its peers reach it there. */
  clusterAddress: string;
  /** Its address on the client link: what the test's load and probes connect to. */
  clientAddress: string;
}

export interface NetworkHosts {
  hosts: NetworkHost[];
  /** The root namespace's address on the cluster bridge: where the hosts reach the forwarders. */
  rootAddress: string;
  /** Takes the host's cluster link down: it is cut off from the other hosts and the databases. */
  partition(host: NetworkHost): void;
  /** Takes it up again. */
  heal(host: NetworkHost): void;
  /** Removes every namespace and link it created; safe to call more than once, and after a failed create. */
  destroy(): void;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();

/** A 10.x.y.0/24 that no route of the machine covers yet, for the bridge and for the client links. */
function freeSubnets(): [string, string] {
  const routes = ip('-4', 'route', 'show', 'table', 'all');
  for (;;) {
    const a = 100 + Math.floor(Math.random() * 150);
    const b = Math.floor(Math.random() * 254);
    const cluster = `10.${a}.${b}`;
    const client = `10.${a}.${b + 1}`;
    if (!routes.includes(`${cluster}.`) && !routes.includes(`${client}.`)) return [cluster, client];
  }
}

/** `count` hosts, each with a cluster link (on one bridge) and a client link. */
export function createHosts(count: number): NetworkHosts {
  // Interface names are at most 15 characters: `<prefix>c3` fits.
  const prefix = `lp${randomBytes(3).toString('hex')}`;
  const bridge = `${prefix}br`;
  const [cluster, client] = freeSubnets();
  const namespaces: string[] = [];
  const links: string[] = [];
  const destroy = () => {
    for (const link of [...links, bridge]) {
      try {
        ip('link', 'del', link);
      } catch {
        // Already gone (with its namespace, or never made).
      }
    }
    for (const netns of namespaces) {
      try {
        ip('netns', 'del', netns);
      } catch {
        // Already gone.
      }
    }
  };
  const rootSide = (host: NetworkHost) => `${prefix}c${host.index}`;
  try {
    ip('link', 'add', bridge, 'type', 'bridge');
    ip('addr', 'add', `${cluster}.1/24`, 'dev', bridge);
    ip('link', 'set', bridge, 'up');
    const hosts: NetworkHost[] = [];
    for (let index = 1; index <= count; index += 1) {
      const netns = `${prefix}-h${index}`;
      ip('netns', 'add', netns);
      namespaces.push(netns);
      ip('-n', netns, 'link', 'set', 'lo', 'up');
      const host: NetworkHost = {
        index,
        netns,
        clusterAddress: `${cluster}.${10 + index}`,
        clientAddress: `${client}.${4 * index + 2}`,
      };
      // The cluster link: the host's end is `cluster`, the other end a port of the bridge.
      const clusterLink = rootSide(host);
      ip('link', 'add', clusterLink, 'type', 'veth', 'peer', 'name', 'cluster', 'netns', netns);
      links.push(clusterLink);
      ip('link', 'set', clusterLink, 'master', bridge, 'up');
      ip('-n', netns, 'addr', 'add', `${host.clusterAddress}/24`, 'dev', 'cluster');
      ip('-n', netns, 'link', 'set', 'cluster', 'up');
      // The client link: a /30 of its own, so that no host reaches another through it.
      const clientLink = `${prefix}k${index}`;
      ip('link', 'add', clientLink, 'type', 'veth', 'peer', 'name', 'client', 'netns', netns);
      links.push(clientLink);
      ip('addr', 'add', `${client}.${4 * index + 1}/30`, 'dev', clientLink);
      ip('link', 'set', clientLink, 'up');
      ip('-n', netns, 'addr', 'add', `${host.clientAddress}/30`, 'dev', 'client');
      ip('-n', netns, 'link', 'set', 'client', 'up');
      hosts.push(host);
    }
    return {
      hosts,
      rootAddress: `${cluster}.1`,
      // The bridge's end goes down: the host's end loses its carrier and drops what it sends.
      partition: (host) => void ip('link', 'set', rootSide(host), 'down'),
      heal: (host) => void ip('link', 'set', rootSide(host), 'up'),
      destroy,
    };
  } catch (error) {
    destroy();
    throw error;
  }
}
