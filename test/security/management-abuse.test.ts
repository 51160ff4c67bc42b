/**
 * Issue 12, the management port on the open internet: counts a game server cannot have, registrations of
 * someone else's address, idle and half-line connections, and a flood of idle connections. Loopback only:
 * peers bind to 127.0.0.x as their local address to stand for distinct hosts.
 */
import dns from "node:dns";
import net from "node:net";
import { once } from "node:events";
import { ManagementServer } from "../../src/management/management-server";
import { readQueryGameServersReply } from "../../src/protocol";

class Peer {
  private buffer = "";
  private lines: string[] = [];
  private waiting: ((line: string) => void) | null = null;
  readonly closed: Promise<unknown>;
  private constructor(readonly socket: net.Socket) {
    socket.setEncoding("utf8");
    socket.on("data", (text: string) => {
      this.buffer += text;
      for (let nl = this.buffer.indexOf("\n"); nl >= 0; nl = this.buffer.indexOf("\n")) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        if (this.waiting) {
          this.waiting(line);
          this.waiting = null;
        } else this.lines.push(line);
      }
    });
    socket.on("error", () => undefined);
    this.closed = once(socket, "close");
  }
  static async connect(port: number, localAddress: string): Promise<Peer> {
    const socket = net.connect({ host: "127.0.0.1", port, localAddress });
    await once(socket, "connect");
    return new Peer(socket);
  }
  send(message: unknown): void {
    this.socket.write((typeof message === "string" ? message : JSON.stringify(message)) + "\n");
  }
  /** The list, asked on this connection: every line sent before has been handled when it arrives. */
  async query(): Promise<unknown[]> {
    this.send({ command: "msQueryGameServers" });
    const line =
      this.lines.shift() ?? (await new Promise<string>((resolve) => (this.waiting = resolve)));
    return (JSON.parse(line) as { content: { servers: unknown[] } }).content.servers;
  }
  get isClosed(): boolean {
    return this.socket.destroyed || this.socket.readableEnded;
  }
}

const register = (serverName: string, serverAddress: string, serverPort = 20000) => ({
  command: "msRegisterGameServer",
  content: { serverName, serverAddress, serverPort },
});
const update = (current: unknown, max: unknown) => ({
  command: "msUpdateGameServerStats",
  content: { players: { current, max }, isLobbyOpen: true, gameplayMode: 1 },
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("management port abuse (issue 12)", () => {
  let server: ManagementServer | undefined;
  const peers: Peer[] = [];
  const lookups: string[] = [];
  beforeEach(() => {
    const original = dns.lookup;
    jest.spyOn(dns, "lookup").mockImplementation(((hostname: string, ...rest: unknown[]) => {
      if (net.isIP(hostname) === 0 && hostname !== "localhost") {
        lookups.push(hostname);
        throw new Error("no DNS in this test");
      }
      return (original as (...a: unknown[]) => unknown)(hostname, ...rest);
    }) as typeof dns.lookup);
  });
  afterEach(async () => {
    for (const peer of peers.splice(0)) peer.socket.destroy();
    await server?.close();
    server = undefined;
    jest.restoreAllMocks();
    expect(lookups).toEqual([]);
  });
  const connect = async (localAddress = "127.0.0.5"): Promise<Peer> => {
    const peer = await Peer.connect(server!.address.port, localAddress);
    peers.push(peer);
    return peer;
  };

  it("refuses counts a game server cannot have, and keeps the stats it had", async () => {
    server = await ManagementServer.start({ host: "127.0.0.1", port: 0, maxInvalidMessages: 1000 });
    const game = await connect();
    game.send(register("Feuerland", "127.0.0.5"));
    game.send(update(3, 4));
    for (const bad of [
      update(99_999_999, 4),
      update(5, 4),
      update(3, 2),
      update(1, 1000),
      update(1, 32_767),
      update(-1, 4),
    ])
      game.send(bad);
    expect(await game.query()).toEqual([
      {
        name: "Feuerland",
        address: "127.0.0.5",
        port: 20000,
        players: { current: 3, max: 4 },
        isLobbyOpen: true,
        gameplayMode: 1,
      },
    ]);
    expect(server.stats.invalidContent).toBe(6);
  });

  it("reads a remote list's counts only within what a game server can hold", () => {
    const entry = (current: unknown, max: unknown) => ({
      name: "x",
      address: "203.0.113.7",
      port: 20000,
      players: { current, max },
    });
    const reply = readQueryGameServersReply({
      command: "msRQueryGameServers",
      content: { servers: [entry("22", 4), entry(99_999_999, 4), entry(3, 32_767)] },
    });
    expect(reply?.servers.map((s) => s.players)).toEqual([{ current: 22, max: 4 }, null, null]);
  });

  it("refuses a registration of an IP other than the connection's own, unless the peer is a trusted relay; host names are never resolved", async () => {
    server = await ManagementServer.start({ host: "127.0.0.1", port: 0, maxInvalidMessages: 1000 });
    const attacker = await connect("127.0.0.5");
    for (const address of ["10.0.0.1", "224.0.0.1", "127.0.0.6", "::1", "8.8.8.8"])
      attacker.send(register("HIJACKED", address));
    expect(await attacker.query()).toEqual([]);
    expect(server.stats.foreignAddress).toBe(5);
    attacker.send(register("Own", "127.0.0.5"));
    expect(await attacker.query()).toEqual([{ name: "Own", address: "127.0.0.5", port: 20000 }]);
    attacker.send(register("Taken over?", "10.0.0.1")); // refused: the registration it had stays
    expect(await attacker.query()).toEqual([{ name: "Own", address: "127.0.0.5", port: 20000 }]);
    const named = await connect("127.0.0.7");
    named.send(register("Named", "bomber.example.org"));
    expect(await named.query()).toHaveLength(2);
    await server.close();

    server = await ManagementServer.start({
      host: "127.0.0.1",
      port: 0,
      trustedCidrs: ["127.0.0.5/32"],
    });
    const relay = await connect("127.0.0.5");
    relay.send(register("Relayed", "10.0.0.1"));
    expect(await relay.query()).toEqual([{ name: "Relayed", address: "10.0.0.1", port: 20000 }]);
    const other = await connect("127.0.0.6");
    other.send(register("Not relayed", "10.0.0.2"));
    expect(await other.query()).toEqual([{ name: "Relayed", address: "10.0.0.1", port: 20000 }]);
  });

  it("closes idle and half-line connections, but not a registered game server", async () => {
    // 2 s, not less: a registration that a loaded machine takes longer than the timeout to read would be
    // closed as idle before it registers.
    server = await ManagementServer.start({ host: "127.0.0.1", port: 0, idleTimeoutMs: 2000 });
    const idle = await connect("127.0.0.5");
    const halfLine = await connect("127.0.0.6");
    const game = await connect("127.0.0.7");
    game.send(register("Stays", "127.0.0.7"));
    expect(await game.query()).toHaveLength(1);
    // A byte every 400 ms (well inside the timeout), never a whole line (bounded: at most 100 bytes).
    let sent = 0;
    const trickle = setInterval(() => {
      if (!halfLine.isClosed && sent++ < 100) halfLine.socket.write("{");
    }, 400);
    try {
      await Promise.all([idle.closed, halfLine.closed]);
    } finally {
      clearInterval(trickle);
    }
    expect(server.stats.closedIdle).toBe(2);
    await sleep(3000);
    expect(game.isClosed).toBe(false);
    expect(await game.query()).toEqual([{ name: "Stays", address: "127.0.0.7", port: 20000 }]);
  }, 20_000);

  it("does not let idle connections lock game servers out: the oldest connection without a game server makes room", async () => {
    server = await ManagementServer.start({
      host: "127.0.0.1",
      port: 0,
      maxConnections: 8,
      maxConnectionsPerAddress: 2,
    });
    const game = await connect("127.0.0.50");
    game.send(register("Early", "127.0.0.50"));
    expect(await game.query()).toHaveLength(1);
    const flood: Peer[] = [];
    for (let i = 0; i < 14; i++) flood.push(await connect(`127.0.1.${10 + Math.floor(i / 2)}`));
    const third = await connect("127.0.1.16"); // a third from one address: refused at once
    await third.closed;
    const late = await connect("127.0.0.51");
    late.send(register("Late", "127.0.0.51"));
    expect(await late.query()).toEqual([
      { name: "Early", address: "127.0.0.50", port: 20000 },
      { name: "Late", address: "127.0.0.51", port: 20000 },
    ]);
    expect(game.isClosed).toBe(false);
    expect(server.stats.evicted).toBeGreaterThanOrEqual(8);
  });
});
