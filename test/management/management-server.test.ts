import dns from "node:dns";
import net from "node:net";
import { once } from "node:events";
import { runManagement } from "../../src/cli/commands/management";
import {
  type ManagementServer as Server,
  ManagementServer,
} from "../../src/management/management-server";
import { queryManagementServer } from "../../src/protocol";

/** A game server or client on one TCP connection: sends lines, reads answer lines. */
class Peer {
  private lines: string[] = [];
  private waiting: ((line: string) => void) | null = null;
  private buffer = "";
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
    this.closed = once(socket, "close");
  }
  static async connect(port: number): Promise<Peer> {
    const socket = net.connect({ host: "127.0.0.1", port });
    await once(socket, "connect");
    return new Peer(socket);
  }
  send(message: unknown): void {
    this.socket.write((typeof message === "string" ? message : JSON.stringify(message)) + "\n");
  }
  next(): Promise<string> {
    const line = this.lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    return new Promise((resolve) => (this.waiting = resolve));
  }
  /** Asks for the list on this connection: every line sent before it has been handled when it arrives. */
  async query(): Promise<unknown> {
    this.send({ command: "msQueryGameServers" });
    const reply = JSON.parse(await this.next()) as {
      command: string;
      content: { servers: unknown[] };
    };
    expect(reply.command).toBe("msRQueryGameServers");
    return sortByName(reply.content.servers);
  }
  end(): void {
    this.socket.end();
  }
}

const sortByName = (list: unknown[]): unknown[] =>
  [...list].sort((a, b) =>
    String((a as { name: string }).name).localeCompare(String((b as { name: string }).name)),
  );

const register = (serverName: unknown, serverAddress: unknown, serverPort: unknown) => ({
  command: "msRegisterGameServer",
  content: { serverName, serverAddress, serverPort },
});
const update = (current: unknown, max: unknown, isLobbyOpen: unknown, gameplayMode: unknown) => ({
  command: "msUpdateGameServerStats",
  content: { players: { current, max }, isLobbyOpen, gameplayMode },
});

describe("management server over real TCP (Bomberman management-server protocol)", () => {
  let server: Server;
  const peers: Peer[] = [];
  const lookups: unknown[] = [];
  beforeEach(() => {
    // Binding calls dns.lookup even for literals: those pass; any other name would be a resolved registration.
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
    jest.restoreAllMocks();
    expect(lookups).toEqual([]);
  });
  const connect = async (): Promise<Peer> => {
    const peer = await Peer.connect(server.address.port);
    peers.push(peer);
    return peer;
  };

  it("registers three game servers, updates, drops one, lists the two left, and refuses every invalid message", async () => {
    // Trusted: these peers on 127.0.0.1 register other addresses (test/security/management-abuse.test.ts refuses that).
    server = await ManagementServer.start({
      host: "127.0.0.1",
      port: 0,
      maxInvalidMessages: 1000,
      trustedCidrs: ["127.0.0.0/8"],
    });
    const events: string[] = [];
    server.on("register", (s) => events.push(`register ${s.name}`));
    server.on("update", (s) => events.push(`update ${s.name} ${s.players?.current}`));
    server.on("unregister", (s, reason) => events.push(`unregister ${s.name} ${reason}`));

    const feuerland = await connect();
    const boesewicht = await connect();
    const bomber = await connect();
    feuerland.send(register("Feuerland", "192.168.0.10", 20000));
    boesewicht.send(register("Server von Bösewicht", "fd40:9dc7:b528::1", 30000));
    bomber.send(register("轰炸机人", "bombergame.example.org", 40000));
    feuerland.send(update(2, 4, true, 2));
    boesewicht.send(update(3, 3, false, 1));
    bomber.send(update(4, 4, false, 2));
    feuerland.send(update(1, 4, true, 1)); // the latest stats win
    await Promise.all([feuerland.query(), boesewicht.query(), bomber.query()]);
    expect(server.list()).toHaveLength(3);

    const gone = once(server, "unregister");
    bomber.end();
    await gone;
    const expected = [
      {
        name: "Feuerland",
        address: "192.168.0.10",
        port: 20000,
        players: { current: 1, max: 4 },
        isLobbyOpen: true,
        gameplayMode: 1,
      },
      {
        name: "Server von Bösewicht",
        address: "fd40:9dc7:b528::1",
        port: 30000,
        players: { current: 3, max: 3 },
        isLobbyOpen: false,
        gameplayMode: 1,
      },
    ];
    const client = await connect();
    expect(await client.query()).toEqual(expected);
    expect(events).toContain("unregister 轰炸机人 closed");

    // Every message the protocol's rules make invalid (docs/list-sources.md), from the registered connections themselves and from a stranger.
    const listeningPort = server.address.port;
    const invalid: unknown[] = [
      '{"command": "msRegisterGameServer", ',
      "not json at all",
      "[1,2,3]",
      '"msQueryGameServers"',
      { content: {} },
      { command: "msDeleteAllGameServers" },
      { command: "msRQueryGameServers", content: { servers: [] } },
      { command: "msRegisterGameServer" },
      register("", "192.168.0.11", 20001),
      register("   ", "192.168.0.11", 20001),
      register(42, "192.168.0.11", 20001),
      register("Kaputt", "192.168.0.256", 20001),
      register("Kaputt", "192.168.0", 20001),
      register("Kaputt", "1.2.3.4.5", 20001),
      register("Kaputt", "fd40::9dc7::1", 20001),
      register("Kaputt", "gggg::1", 20001),
      register("Kaputt", "", 20001),
      register("Kaputt", "bad host name!", 20001),
      register("Kaputt", "example.123", 20001),
      register("Kaputt", 12345, 20001),
      register("Kaputt", "192.168.0.11", 0),
      register("Kaputt", "192.168.0.11", 51963),
      register("Kaputt", "192.168.0.11", listeningPort),
      register("Kaputt", "192.168.0.11", 65536),
      register("Kaputt", "192.168.0.11", -1),
      register("Kaputt", "192.168.0.11", 1.5),
      register("Kaputt", "192.168.0.11", null),
      { command: "msUpdateGameServerStats" },
      update(1, 5, true, 1),
      update(1, 1, true, 1),
      update(-1, 4, true, 1),
      update(5, 4, true, 1), // more players than places (the protocol allows it as a queue; gsindex does not, docs/list-sources.md)
      update("x", 4, true, 1),
      update(1, 4, "true", 1),
      update(1, 4, 1, 1),
      update(1, 4, true, 3),
      update(1, 4, true, 0),
      update(1, 4, true, "1"),
      { command: "msUpdateGameServerStats", content: { isLobbyOpen: true, gameplayMode: 1 } },
      "x".repeat(20_000),
    ];
    const stranger = await connect();
    for (const peer of [feuerland, boesewicht, stranger]) {
      for (const message of invalid) peer.send(message);
      expect(await peer.query()).toEqual(expected);
    }
    stranger.send(update(4, 4, true, 2)); // not registered: dropped
    stranger.send({ command: "msUnregisterGameServer" }); // removes nothing: it has no server
    expect(await stranger.query()).toEqual(expected);
    expect(server.stats).toMatchObject({ notRegistered: 1, overlongLines: 3 });
    expect(
      server.stats.invalidJson +
        server.stats.unknownCommand +
        server.stats.invalidContent +
        server.stats.overlongLines,
    ).toBe(invalid.length * 3);

    // Numeric strings where the protocol document's own examples send them, and a re-registration that overwrites.
    boesewicht.send({
      command: "msUpdateGameServerStats",
      content: { players: { current: "2", max: "3" }, isLobbyOpen: true, gameplayMode: 2 },
    });
    feuerland.send(register("Feuerland 2", "feuerland.example.org", 20002));
    await boesewicht.query(); // each connection's own answer proves its lines were handled
    expect(await feuerland.query()).toEqual([
      { name: "Feuerland 2", address: "feuerland.example.org", port: 20002 },
      { ...expected[1], players: { current: 2, max: 3 }, isLobbyOpen: true, gameplayMode: 2 },
    ]);
    boesewicht.send({ command: "msUnregisterGameServer" });
    expect(await boesewicht.query()).toEqual([
      { name: "Feuerland 2", address: "feuerland.example.org", port: 20002 },
    ]);
    expect(events).toEqual(
      expect.arrayContaining([
        "unregister Feuerland replaced",
        "register Feuerland 2",
        "unregister Server von Bösewicht command",
      ]),
    );
  });

  it("closes a connection that keeps sending garbage, and refuses too many connections from one address", async () => {
    const logged: string[] = [];
    const log = (level: string) => (fields: Record<string, unknown>, message: string) =>
      logged.push(`${level} ${message} ${String(fields.refusal ?? "")}`);
    server = await ManagementServer.start({
      host: "127.0.0.1",
      port: 0,
      trustedCidrs: ["127.0.0.1"],
      maxInvalidMessages: 5,
      maxConnectionsPerAddress: 2,
      logger: { debug: log("debug"), info: log("info"), warn: log("warn") },
    });
    const first = await connect();
    first.send(register("Keeper", "10.0.0.1", 20000));
    const noisy = await connect();
    for (let i = 0; i < 5; i++) noisy.send("garbage");
    await noisy.closed;
    expect(server.stats.closedForGarbage).toBe(1);
    expect(logged).toContain("debug management message dropped invalidJson");
    expect(logged).toContain(
      "warn management connection closed: it keeps sending invalid messages ",
    );

    const second = await connect();
    const third = await connect();
    await third.closed;
    expect(server.stats.connectionsRefused).toBe(1);
    expect(await second.query()).toEqual([{ name: "Keeper", address: "10.0.0.1", port: 20000 }]);
  });

  it("is crawled by the management client and the CLI, numeric strings included", async () => {
    server = await ManagementServer.start({
      host: "127.0.0.1",
      port: 0,
      trustedCidrs: ["127.0.0.1/32"],
    });
    const game = await connect();
    game.send(register("Feuerland", "192.168.0.10", 20000));
    game.send(update(1, 4, true, 1));
    await game.query();
    const reply = await queryManagementServer({
      host: "127.0.0.1",
      port: server.address.port,
      timeoutMs: 1000,
    });
    expect(reply).toEqual({
      servers: [
        {
          name: "Feuerland",
          address: "192.168.0.10",
          port: 20000,
          players: { current: 1, max: 4 },
          isLobbyOpen: true,
          gameplayMode: 1,
        },
      ],
      skipped: 0,
    });
    let out = "";
    expect(
      await runManagement(["list", `127.0.0.1:${server.address.port}`, "--json"], {
        stdout: { write: (t: string) => (out += t) },
        stderr: { write: () => undefined },
      }),
    ).toBe(0);
    expect(JSON.parse(out)).toEqual({ servers: reply.servers });
  });
});

describe("management client against other servers", () => {
  it("reads a pretty-printed answer like the protocol document's example, with numeric strings, in pieces, after other messages", async () => {
    const documentedAnswer = `{
    "command": "msRQueryGameServers",
    "content": {
        "servers": [
            { "name": "轰炸机人", "address": "bombergame.example.org", "port": 40000,
              "players": { "current": "22", "max": 4 }, "isLobbyOpen": false,
              "gameplayMode": 2 },
            { "name": "Server von Bösewicht", "address": "fd40:9dc7:b528::1", "port": 30000,
              "players": { "current": "3", "max": 3 }, "isLobbyOpen": false,
              "gameplayMode": 1 },
            { "name": "broken", "address": "300.1.1.1", "port": 1 },
            { "name": "Feuerland", "address": "192.168.0.10", "port": 20000,
              "players": { "current": "1", "max": 4 }, "isLobbyOpen": true,
              "gameplayMode": 1 }
        ]
    }
}`;
    const remote = net.createServer((socket) => {
      socket.once("data", () => {
        const bytes = Buffer.from(
          '{"command":"hello","content":{"text":"a } in a string"}}\n' + documentedAnswer,
        );
        for (let i = 0; i < bytes.length; i += 7) socket.write(bytes.subarray(i, i + 7));
      });
    });
    remote.listen(0, "127.0.0.1");
    await once(remote, "listening");
    const reply = await queryManagementServer({
      host: "127.0.0.1",
      port: (remote.address() as net.AddressInfo).port,
      timeoutMs: 1000,
    });
    expect(reply.skipped).toBe(1);
    expect(reply.servers).toEqual([
      {
        name: "轰炸机人",
        address: "bombergame.example.org",
        port: 40000,
        players: { current: 22, max: 4 },
        isLobbyOpen: false,
        gameplayMode: 2,
      },
      {
        name: "Server von Bösewicht",
        address: "fd40:9dc7:b528::1",
        port: 30000,
        players: { current: 3, max: 3 },
        isLobbyOpen: false,
        gameplayMode: 1,
      },
      {
        name: "Feuerland",
        address: "192.168.0.10",
        port: 20000,
        players: { current: 1, max: 4 },
        isLobbyOpen: true,
        gameplayMode: 1,
      },
    ]);
    remote.close();
  });

  it("gives up at its deadline with TIMEOUT, and reports a closed connection", async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket));
    silent.listen(0, "127.0.0.1");
    await once(silent, "listening");
    const port = (silent.address() as net.AddressInfo).port;
    await expect(
      queryManagementServer({ host: "127.0.0.1", port, timeoutMs: 100 }),
    ).rejects.toMatchObject({ code: "TIMEOUT" });
    for (const s of sockets) s.destroy();
    silent.close();
    const closing = net.createServer((socket) => socket.end());
    closing.listen(0, "127.0.0.1");
    await once(closing, "listening");
    await expect(
      queryManagementServer({
        host: "127.0.0.1",
        port: (closing.address() as net.AddressInfo).port,
        timeoutMs: 1000,
      }),
    ).rejects.toMatchObject({ code: "TRUNCATED" });
    closing.close();
  });
});
