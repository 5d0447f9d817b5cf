/**
 * A raw TCP server on 127.0.0.1 (OS-chosen port) that answers every read with the same
 * bytes, for clients facing replies no HTTP server would send. It never ends a connection
 * itself: `close()` destroys them, then stops listening.
 *
 * @module
 */
import net from "node:net";
import type { AddressInfo } from "node:net";

/** A started {@link startCannedReplyServer}. */
export interface CannedReplyServer {
  port: number;
  /** The connections accepted so far. */
  connections: net.Socket[];
  close(): Promise<void>;
}

/** Starts a server that writes `reply` on each read of a connection. */
export async function startCannedReplyServer(reply: string): Promise<CannedReplyServer> {
  const connections: net.Socket[] = [];
  const server = net.createServer((socket) => {
    connections.push(socket);
    socket.on("data", () => socket.write(reply));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as AddressInfo).port,
    connections,
    close: async () => {
      connections.forEach((s) => s.destroy());
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
