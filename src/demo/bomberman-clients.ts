/**
 * Game servers that register with gsindex's own JSON-over-TCP management server the way a Bomberman
 * server would: one TCP connection each, msRegisterGameServer, then msUpdateGameServerStats as
 * players come and go. Their addresses are only text to gsindex: they are never queried.
 */
import net from "node:net";

export interface BombermanClient {
  name: string;
  close(): void;
}

function send(socket: net.Socket, command: string, content?: unknown): void {
  socket.write(JSON.stringify(content === undefined ? { command } : { command, content }) + "\n");
}

export async function startBombermanServers(options: {
  managementPort: number;
  count: number;
  updateEveryMs: number;
}): Promise<BombermanClient[]> {
  const clients: BombermanClient[] = [];
  for (let i = 0; i < options.count; i++) {
    // Each from its own loopback address: a registration speaks only for the address it comes from.
    const address = `127.0.1.${i + 1}`;
    const socket = net.connect({
      host: "127.0.0.1",
      port: options.managementPort,
      localAddress: address,
    });
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    socket.on("error", () => undefined);
    const name = `Bomberman Arena #${i + 1}`;
    send(socket, "msRegisterGameServer", {
      serverName: name,
      serverAddress: address,
      serverPort: 30000 + i,
    });
    const max = 2 + (i % 3);
    let tick = 0;
    const update = (): void => {
      tick += 1;
      const current = (tick + i) % (max + 1); // 0 <= current <= max (issue 12 refuses more)
      send(socket, "msUpdateGameServerStats", {
        players: { current, max },
        isLobbyOpen: current < max,
        gameplayMode: 1 + (i % 2),
      });
    };
    update();
    const timer = setInterval(update, options.updateEveryMs);
    timer.unref();
    clients.push({
      name,
      close() {
        clearInterval(timer);
        socket.end();
      },
    });
  }
  return clients;
}
