import { Server, Socket, connect, createServer } from 'node:net';

/**
 * A TCP proxy in front of a real server, for the tests that cut a backing service off: what a
 * network partition, a failover or a restart looks like to the services, without stopping the
 * machine's shared server. `cut()` drops every connection and refuses new ones; `restore()` lets
 * them through again, on the same port.
 */
export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
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
  let server: Server | undefined;
  let port = 0;
  const listen = async () => {
    server = createServer(onConnection);
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(port, '127.0.0.1', () => resolve());
    });
    port = (server.address() as { port: number }).port;
  };
  const stop = async () => {
    const closing = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
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
    close: stop,
  };
}
