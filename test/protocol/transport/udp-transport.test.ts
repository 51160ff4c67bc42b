import dgram from "node:dgram";
import {
  isProtocolError,
  UdpTransport,
  canonicalIp,
  type HandlerResult,
} from "../../../src/protocol";

type Responder = (msg: Buffer, rinfo: dgram.RemoteInfo, socket: dgram.Socket) => void;

async function startServer(
  type: "udp4" | "udp6",
  respond: Responder,
): Promise<{ socket: dgram.Socket; port: number; close: () => Promise<void> }> {
  const socket = dgram.createSocket(type);
  socket.on("message", (msg, rinfo) => respond(msg, rinfo, socket));
  await new Promise<void>((resolve) =>
    socket.bind(0, type === "udp4" ? "127.0.0.1" : "::1", resolve),
  );
  return {
    socket,
    port: socket.address().port,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

const echo: Responder = (msg, rinfo, socket) => socket.send(msg, rinfo.port, rinfo.address);
const accept = (payload: Buffer): HandlerResult<string> => ({
  value: payload.toString(),
  final: true,
});

describe("UdpTransport", () => {
  let transport: UdpTransport;
  beforeEach(() => {
    transport = new UdpTransport();
  });
  afterEach(async () => {
    await transport.close();
  });

  async function ask(
    host: string,
    port: number,
    text: string,
    options: { timeoutMs?: number; retries?: number; attemptTimeoutMs?: number } = {},
  ): Promise<string> {
    const signal = AbortSignal.timeout(options.timeoutMs ?? 1000);
    const session = await transport.acquire({ host, port }, signal);
    try {
      const result = await session.exchange(Buffer.from(text), accept, {
        signal,
        attemptTimeoutMs: options.attemptTimeoutMs ?? 500,
        retries: options.retries ?? 0,
      });
      return result.value;
    } finally {
      session.release();
    }
  }

  it("matches a reply by address and port", async () => {
    const server = await startServer("udp4", echo);
    try {
      await expect(ask("127.0.0.1", server.port, "hello")).resolves.toBe("hello");
      expect(transport.stats.sent).toBe(1);
      expect(transport.stats.received).toBe(1);
    } finally {
      await server.close();
    }
  });

  it("drops datagrams from other ports and other addresses, and counts them", async () => {
    const intruder = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => intruder.bind(0, "127.0.0.1", resolve));
    const server = await startServer("udp4", (msg, rinfo, socket) => {
      // A foreign packet (same host, other port) first, then one from another loopback address, then the real answer.
      intruder.send(Buffer.from("forged"), rinfo.port, "127.0.0.1");
      const other = dgram.createSocket("udp4");
      other.bind(0, "127.0.0.2", () => {
        other.send(Buffer.from("forged too"), rinfo.port, "127.0.0.1", () => {
          other.close();
          setTimeout(() => socket.send(msg, rinfo.port, rinfo.address), 30);
        });
      });
    });
    try {
      await expect(ask("127.0.0.1", server.port, "real")).resolves.toBe("real");
      expect(transport.stats.droppedForeign).toBe(2);
    } finally {
      intruder.close();
      await server.close();
    }
  });

  it("fails with TIMEOUT when nothing answers, and re-sends up to `retries` times", async () => {
    let requests = 0;
    const server = await startServer("udp4", () => {
      requests += 1;
    });
    try {
      const error = await ask("127.0.0.1", server.port, "anyone?", {
        retries: 2,
        attemptTimeoutMs: 40,
        timeoutMs: 2000,
      }).catch((e: unknown) => e);
      expect(isProtocolError(error, "TIMEOUT")).toBe(true);
      expect(requests).toBe(3);
    } finally {
      await server.close();
    }
  });

  it("succeeds on a retry when the first request is lost", async () => {
    let requests = 0;
    const server = await startServer("udp4", (msg, rinfo, socket) => {
      requests += 1;
      if (requests > 1) socket.send(msg, rinfo.port, rinfo.address);
    });
    try {
      await expect(
        ask("127.0.0.1", server.port, "again", { retries: 1, attemptTimeoutMs: 40 }),
      ).resolves.toBe("again");
    } finally {
      await server.close();
    }
  });

  it("ends at the overall deadline even with attempts left (TIMEOUT), and ABORTED on the caller's abort", async () => {
    const server = await startServer("udp4", () => undefined);
    try {
      const timedOut = await ask("127.0.0.1", server.port, "x", {
        timeoutMs: 50,
        attemptTimeoutMs: 1000,
        retries: 5,
      }).catch((e: unknown) => e);
      expect(isProtocolError(timedOut, "TIMEOUT")).toBe(true);

      const controller = new AbortController();
      const session = await transport.acquire(
        { host: "127.0.0.1", port: server.port },
        controller.signal,
      );
      const pending = session.exchange(Buffer.from("y"), accept, {
        signal: controller.signal,
        attemptTimeoutMs: 1000,
        retries: 0,
      });
      controller.abort();
      const aborted = await pending.catch((e: unknown) => e);
      session.release();
      expect(isProtocolError(aborted, "ABORTED")).toBe(true);
    } finally {
      await server.close();
    }
  });

  it("ignores answers the handler refuses and keeps waiting", async () => {
    const server = await startServer("udp4", (msg, rinfo, socket) => {
      socket.send(Buffer.from("noise"), rinfo.port, rinfo.address);
      socket.send(msg, rinfo.port, rinfo.address);
    });
    try {
      const signal = AbortSignal.timeout(1000);
      const session = await transport.acquire({ host: "127.0.0.1", port: server.port }, signal);
      const result = await session.exchange(
        Buffer.from("wanted"),
        (p) => (p.toString() === "noise" ? undefined : accept(p)),
        { signal, attemptTimeoutMs: 500, retries: 0 },
      );
      session.release();
      expect(result.value).toBe("wanted");
      expect(transport.stats.droppedUnexpected).toBe(1);
    } finally {
      await server.close();
    }
  });

  it("keeps a tentative answer and takes a final one that follows within graceMs", async () => {
    const server = await startServer("udp4", (_msg, rinfo, socket) => {
      socket.send(Buffer.from("goldsrc"), rinfo.port, rinfo.address);
      setTimeout(() => {
        try {
          socket.send(Buffer.from("source"), rinfo.port, rinfo.address);
        } catch {
          // The test may have closed the server already.
        }
      }, 20);
    });
    try {
      const signal = AbortSignal.timeout(1000);
      const session = await transport.acquire({ host: "127.0.0.1", port: server.port }, signal);
      const handle = (p: Buffer): HandlerResult<string> => ({
        value: p.toString(),
        final: p.toString() === "source",
      });
      const both = await session.exchange(Buffer.from("q"), handle, {
        signal,
        attemptTimeoutMs: 500,
        retries: 0,
        graceMs: 300,
      });
      expect(both.value).toBe("source");
      const only = await session.exchange(
        Buffer.from("q"),
        (p) => ({ value: p.toString(), final: false }),
        { signal, attemptTimeoutMs: 500, retries: 0, graceMs: 5 },
      );
      expect(only.value).toBe("goldsrc");
      session.release();
    } finally {
      await server.close();
    }
  });

  it("runs exchanges to one remote one after another", async () => {
    const server = await startServer("udp4", (msg, rinfo, socket) =>
      setTimeout(() => socket.send(msg, rinfo.port, rinfo.address), 10),
    );
    try {
      const results = await Promise.all(
        ["a", "b", "c"].map((t) => ask("127.0.0.1", server.port, t)),
      );
      expect(results).toEqual(["a", "b", "c"]);
    } finally {
      await server.close();
    }
  });

  it("reassembles split datagrams through the given assembler", async () => {
    const server = await startServer("udp4", (_msg, rinfo, socket) => {
      for (const part of ["one", "two"])
        socket.send(
          Buffer.concat([Buffer.from([0xfe, 0xff, 0xff, 0xff]), Buffer.from(part)]),
          rinfo.port,
          rinfo.address,
        );
    });
    try {
      const signal = AbortSignal.timeout(1000);
      const session = await transport.acquire({ host: "127.0.0.1", port: server.port }, signal);
      const parts: Buffer[] = [];
      const createAssembler = () => ({
        push: (d: Buffer) => (
          parts.push(d.subarray(4)),
          parts.length === 2 ? Buffer.concat(parts) : null
        ),
      });
      const result = await session.exchange(Buffer.from("q"), accept, {
        signal,
        attemptTimeoutMs: 500,
        retries: 0,
        createAssembler,
      });
      session.release();
      expect(result.value).toBe("onetwo");
    } finally {
      await server.close();
    }
  });

  it("carries large datagrams (60,000 bytes)", async () => {
    const big = Buffer.alloc(60000, 0x61);
    const server = await startServer("udp4", (_msg, rinfo, socket) =>
      socket.send(big, rinfo.port, rinfo.address),
    );
    try {
      await expect(ask("127.0.0.1", server.port, "big")).resolves.toHaveLength(60000);
    } finally {
      await server.close();
    }
  });

  it("speaks IPv6 over ::1", async () => {
    const server = await startServer("udp6", echo);
    try {
      await expect(ask("::1", server.port, "six")).resolves.toBe("six");
      await expect(ask("[0:0:0:0:0:0:0:1]", server.port, "long form")).resolves.toBe("long form");
    } finally {
      await server.close();
    }
  });

  it("refuses host names and bad ports with INVALID_ARGUMENT", async () => {
    const signal = AbortSignal.timeout(100);
    await expect(
      transport.acquire({ host: "example.org", port: 27015 }, signal),
    ).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(transport.acquire({ host: "127.0.0.1", port: 0 }, signal)).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });

  it("carries hundreds of concurrent exchanges to different servers over one socket", async () => {
    const servers = await Promise.all(Array.from({ length: 200 }, () => startServer("udp4", echo)));
    try {
      const results = await Promise.all(
        servers.map((s, i) =>
          ask("127.0.0.1", s.port, `server ${i}`, {
            timeoutMs: 5000,
            attemptTimeoutMs: 1000,
            retries: 2,
          }),
        ),
      );
      expect(results).toEqual(servers.map((_s, i) => `server ${i}`));
      expect(transport.localPort(4)).not.toBeNull();
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  });
});

describe("canonicalIp", () => {
  it("writes IPv6 literals as the kernel reports them", () => {
    expect(canonicalIp("0:0:0:0:0:0:0:1")).toEqual({ ip: "::1", family: 6 });
    expect(canonicalIp("[FD00:0:0::0001]")).toEqual({ ip: "fd00::1", family: 6 });
    expect(canonicalIp("127.0.0.1")).toEqual({ ip: "127.0.0.1", family: 4 });
    expect(canonicalIp("localhost")).toBeNull();
  });
});
