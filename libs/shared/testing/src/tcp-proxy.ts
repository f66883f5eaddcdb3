import { Server, Socket, connect, createServer } from 'node:net';

/**
 * A TCP proxy in front of a real server, for the tests that cut a backing service off: what a
 * network partition, a failover or a restart looks like to the services, without stopping the
 * machine's shared server. `cut()` drops every connection and refuses new ones; `restore()` lets
 * them through again, on the same port. `retarget()` moves the proxy to another server, as a
 * Kubernetes Service moves to a promoted database: existing connections are dropped, new ones go
 * to the new server.
 */
export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  retarget(target: TcpTarget): void;
  close(): Promise<void>;
}

export interface TcpTarget {
  host: string;
  port: number;
}

/** `listenHost` is where the proxy listens: 127.0.0.1 unless given (a bridge's address, for network namespaces). */
export async function startTcpProxy(initial: TcpTarget, listenHost = '127.0.0.1'): Promise<TcpProxy> {
  let target = initial;
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const onConnection = (client: Socket) => {
    const upstream = connect(target.port, target.host);
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  };
  const dropAll = () => {
    for (const socket of sockets) socket.destroy();
  };
  let server: Server | undefined;
  let port = 0;
  const listen = async () => {
    server = createServer(onConnection);
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(port, listenHost, () => resolve());
    });
    port = (server.address() as { port: number }).port;
  };
  const stop = async () => {
    const closing = server;
    server = undefined;
    dropAll();
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
  };
  await listen();
  return {
    get port() {
      return port;
    },
    cut: stop,
    restore: async () => {
      if (!server) await listen();
    },
    retarget: (next) => {
      target = next;
      dropAll();
    },
    close: stop,
  };
}
