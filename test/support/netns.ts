import { type ChildProcess, execFileSync, type SpawnOptions, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';

/**
 * Network namespaces of a test's own, standing for hosts: each has an address
 * of its own on a bridge of the test's own, whose host-side address
 * ({@link Hosts.serviceAddress}) is where the test's services listen. Root
 * and iproute2 are needed (`ip netns`, veth, bridge): .ci/run runs as root,
 * and iproute2 is part of Debian's base system.
 */
export interface Hosts {
  /** The host-side address on the bridge: services listening there are reachable from every namespace. */
  serviceAddress: string;
  /** One per namespace. */
  names: string[];
  /** The address of each namespace on the bridge. */
  addresses: string[];
  /** Spawns `command args` inside namespace `index` (`ip netns exec`, which execs it: the child's pid is the command's). */
  spawn: (index: number, command: string, args: string[], options?: SpawnOptions) => ChildProcess;
  /** Takes namespace `index`'s link down: it reaches nothing and nothing reaches it, silently (no reset). */
  cut: (index: number) => void;
  /** Brings namespace `index`'s link back up. */
  restore: (index: number) => void;
  /** Kills what {@link spawn} started (SIGKILL) and deletes every namespace, link and the bridge made; never throws. */
  teardown: () => Promise<void>;
}

function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * Why namespaces cannot be made here (not root, no `ip`, namespaces refused:
 * an unprivileged container), or undefined when they can: a probe namespace
 * is made and deleted.
 */
export function netnsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'network namespaces need root (CI runs as root)';
  const probe = `hiresync-probe-${randomBytes(4).toString('hex')}`;
  try {
    ip('netns', 'add', probe);
  } catch (error) {
    return `ip netns add failed: ${(error as Error).message.split('\n')[0]}`;
  } finally {
    try {
      ip('netns', 'del', probe);
    } catch {
      // It was not made.
    }
  }
  return undefined;
}

/** A /24 of 10.231.0.0/16 that no interface of this host has an address in. */
function freeSubnet(): string {
  const used = ip('-4', '-o', 'addr', 'show');
  for (let tries = 0; tries < 100; tries += 1) {
    const subnet = `10.231.${randomBytes(1)[0]}`;
    if (!used.includes(` ${subnet}.`)) return subnet;
  }
  throw new Error('no free /24 in 10.231.0.0/16 for the test namespaces');
}

/**
 * Makes `count` namespaces on a bridge of their own (10.231.N.1/24 on the
 * host side, 10.231.N.10 + i in namespace i), with loopback up in each.
 * Names carry HIRESYNC_TEST_TAG and a random suffix, so that runs sharing
 * a machine never meet. On a failure half-way, what was made is deleted.
 */
export function createHosts(count: number): Hosts {
  const tag = (process.env.HIRESYNC_TEST_TAG ?? '').replace(/[^a-z0-9]/gi, '').slice(0, 12);
  const id = randomBytes(3).toString('hex');
  // Interface names: at most 15 characters.
  const bridge = `hs${id}br`;
  const hostSide = (i: number) => `hs${id}h${i}`;
  const subnet = freeSubnet();
  const serviceAddress = `${subnet}.1`;
  const names = Array.from({ length: count }, (_, i) => `hiresync-${tag || 'test'}-${id}-${i}`);
  const addresses = names.map((_, i) => `${subnet}.${10 + i}`);
  const made: Array<() => void> = [];
  const children = new Set<ChildProcess>();
  const teardown = async () => {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
    }
    for (const undo of made.splice(0).reverse()) {
      try {
        undo();
      } catch {
        // Gone already (a namespace's veth goes with it).
      }
    }
  };
  try {
    ip('link', 'add', bridge, 'type', 'bridge');
    made.push(() => ip('link', 'del', bridge));
    ip('addr', 'add', `${serviceAddress}/24`, 'dev', bridge);
    ip('link', 'set', bridge, 'up');
    names.forEach((ns, i) => {
      ip('netns', 'add', ns);
      made.push(() => ip('netns', 'del', ns));
      ip('link', 'add', hostSide(i), 'type', 'veth', 'peer', 'name', `hs${id}n${i}`);
      made.push(() => ip('link', 'del', hostSide(i)));
      ip('link', 'set', `hs${id}n${i}`, 'netns', ns, 'name', 'eth0');
      ip('link', 'set', hostSide(i), 'master', bridge, 'up');
      ip('-n', ns, 'addr', 'add', `${addresses[i]}/24`, 'dev', 'eth0');
      ip('-n', ns, 'link', 'set', 'eth0', 'up');
      ip('-n', ns, 'link', 'set', 'lo', 'up');
    });
  } catch (error) {
    void teardown();
    throw error;
  }
  const nameOf = (index: number) => {
    const ns = names[index];
    if (ns === undefined) throw new Error(`no namespace ${index}`);
    return ns;
  };
  return {
    serviceAddress,
    names,
    addresses,
    spawn: (index, command, args, options = {}) => {
      const child = spawn('ip', ['netns', 'exec', nameOf(index), command, ...args], options);
      children.add(child);
      return child;
    },
    cut: (index) => {
      ip('link', 'set', hostSide(index), 'down');
    },
    restore: (index) => {
      ip('link', 'set', hostSide(index), 'up');
    },
    teardown,
  };
}

/**
 * Whether tests that need namespaces run here: true when they can be made.
 * Otherwise, outside CI: false, said on stderr (the test is skipped); in CI
 * (env CI set, as .ci/run sets it, running as root): an error, not a skip.
 */
export function netnsPresentUnlessCi(): boolean {
  const reason = netnsUnavailable();
  if (reason === undefined) return true;
  if (process.env.CI)
    throw new Error(`network namespaces are needed in CI (.ci/run runs as root): ${reason}`);
  process.stderr.write(`skipped: ${reason} (with CI set this fails instead)\n`);
  return false;
}
