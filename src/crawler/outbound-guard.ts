/**
 * The address policy (./address-policy.ts) for list sources: the Valve master, a Quake 3 master, a management
 * server, an address list URL, the Steam Web API. A source's host name is the operator's (configuration or
 * the admin API), so it may be resolved; but it is resolved once, here, every address it resolves to must pass
 * the policy, and the connection goes to the checked address (a lookup that answers a public address to a check
 * and a private one to the socket, DNS rebinding, gets nowhere). A refusal throws AddressRefusedError before
 * any socket exists.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { ProtocolError } from "../protocol";
import type { AddressPolicy, AddressVerdict } from "./address-policy";

/** Every address a host name resolves to (dns.lookup with all: true by default; tests inject their own). */
export type LookupAll = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const systemLookupAll: LookupAll = (hostname) =>
  dnsLookup(hostname, { all: true, verbatim: true });

export interface CheckedAddress {
  /** The IP to connect to (canonical text). */
  address: string;
  family: 4 | 6;
}

const REASONS: Record<Exclude<AddressVerdict["reason"], "public" | "allow-listed">, string> = {
  "non-public": "not a public address (private, loopback, link-local, multicast, reserved, ...)",
  relay: "a Steam Datagram Relay address",
  blocked: "in a blocked range",
  "host-name": "a host name that may not be resolved",
  invalid: "not an IP address or host name",
};

/** Why the policy refused an address, in words (for errors that reach an operator). */
export function refusalText(reason: AddressVerdict["reason"]): string {
  return REASONS[reason as keyof typeof REASONS] ?? reason;
}

/** A host name as a source may give it (letters, digits, dashes, dots), or not. */
export function isHostName(text: string): boolean {
  return HOST_NAME.test(text);
}

/**
 * A contact the address policy refuses; nothing was sent. A ProtocolError (code ADDRESS_REFUSED), so a
 * protocol function that calls an injected fetch stops at once instead of re-trying it.
 */
export class AddressRefusedError extends ProtocolError {
  constructor(
    readonly host: string,
    /** The resolved address that was refused (null when `host` itself was). */
    readonly address: string | null,
    readonly reason: AddressVerdict["reason"] | "unresolvable",
  ) {
    const why =
      reason === "unresolvable"
        ? "does not resolve to any address"
        : `is ${REASONS[reason as keyof typeof REASONS] ?? reason}`;
    super(
      "ADDRESS_REFUSED",
      `address policy: ${address !== null && address !== host ? `${host} resolves to ${address}, which ${why}` : `${host} ${why}`}; ` +
        "nothing was sent to it (ADDRESS_ALLOW_LIST names ranges that may be contacted)",
    );
    this.name = "AddressRefusedError";
  }
}

export function isAddressRefused(err: unknown): err is AddressRefusedError {
  return err instanceof AddressRefusedError;
}

export interface OutboundGuard {
  /** The checked IP to connect to for `host` (an IP literal, or a host name resolved once). */
  resolve(host: string, port?: number): Promise<CheckedAddress>;
  /**
   * GET `url` (http or https) from the checked address, the TLS name and Host header still the URL's. Redirects
   * are not followed (a redirect could point anywhere): a 3xx is answered as it is.
   */
  fetch(
    url: string,
    init?: { signal?: AbortSignal; headers?: Record<string, string> },
  ): Promise<Response>;
}

export interface OutboundGuardOptions {
  /** The policy, or a function giving the current one (the blocked ranges change while the process runs). */
  policy: AddressPolicy | (() => Promise<AddressPolicy>);
  /** @defaultValue systemLookupAll */
  lookup?: LookupAll;
  /** Contacts allowed whatever the policy says: gsindex's own management server on loopback. */
  exempt?: (address: string, port: number | undefined) => boolean;
  /** A response body larger than this is refused. @defaultValue 64 MiB */
  maxBodyBytes?: number;
}

const HOST_NAME =
  /^(?=.{1,253}\.?$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;

export function createOutboundGuard(options: OutboundGuardOptions): OutboundGuard {
  const lookupAll = options.lookup ?? systemLookupAll;
  const maxBodyBytes = options.maxBodyBytes ?? 64 * 1024 * 1024;

  const currentPolicy = async (): Promise<AddressPolicy> =>
    typeof options.policy === "function" ? options.policy() : options.policy;

  const checkIp = (
    policy: AddressPolicy,
    host: string,
    ip: string,
    port: number | undefined,
  ): CheckedAddress => {
    const verdict = policy.check(ip);
    const address = verdict.ip ?? ip;
    if (!verdict.queryable && !(verdict.ip !== null && options.exempt?.(verdict.ip, port)))
      throw new AddressRefusedError(host, ip === host ? null : ip, verdict.reason);
    return { address, family: isIP(address) === 6 ? 6 : 4 };
  };

  const resolve = async (rawHost: string, port?: number): Promise<CheckedAddress> => {
    const host = rawHost.startsWith("[") && rawHost.endsWith("]") ? rawHost.slice(1, -1) : rawHost;
    // A zone id (fe80::1%lo) names one of our own interfaces: never a list source's address.
    if (host.includes("%")) throw new AddressRefusedError(host, null, "invalid");
    const policy = await currentPolicy();
    if (isIP(host) !== 0) return checkIp(policy, host, host, port);
    if (!HOST_NAME.test(host)) throw new AddressRefusedError(host, null, "invalid");
    // An operator may allow-list a name outright (ADDRESS_ALLOW_LIST=master.lan): its addresses are then trusted.
    const named = policy.check(host.toLowerCase());
    const found = await lookupAll(host);
    if (found.length === 0) throw new AddressRefusedError(host, null, "unresolvable");
    // Every address, not only the first: the socket must not be able to pick one the check did not see.
    const checked = found.map((a) =>
      named.queryable
        ? { address: a.address, family: (a.family === 6 ? 6 : 4) as 4 | 6 }
        : checkIp(policy, host, a.address, port),
    );
    return checked[0]!;
  };

  const fetchChecked = async (
    url: string,
    init: { signal?: AbortSignal; headers?: Record<string, string> } = {},
  ): Promise<Response> => {
    const target = new URL(url);
    if (target.protocol !== "http:" && target.protocol !== "https:")
      throw new AddressRefusedError(target.protocol, null, "invalid");
    const port =
      target.port === "" ? (target.protocol === "https:" ? 443 : 80) : Number(target.port);
    const checked = await resolve(target.hostname, port);
    init.signal?.throwIfAborted();
    const client = target.protocol === "https:" ? https : http;
    return new Promise<Response>((resolvePromise, reject) => {
      const request = client.request(
        {
          protocol: target.protocol,
          host: target.hostname.replace(/^\[|\]$/g, ""),
          port,
          path: `${target.pathname}${target.search}`,
          method: "GET",
          headers: init.headers ?? {},
          ...(init.signal ? { signal: init.signal } : {}),
          // The socket's only lookup answers the checked address: it never resolves the name again.
          lookup: ((
            _hostname: string,
            opts: { all?: boolean },
            callback: (...args: unknown[]) => void,
          ) => {
            if (opts.all) callback(null, [{ address: checked.address, family: checked.family }]);
            else callback(null, checked.address, checked.family);
          }) as unknown as http.RequestOptions["lookup"],
        },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size > maxBodyBytes) {
              request.destroy(new Error(`response larger than ${maxBodyBytes} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          response.on("error", reject);
          response.on("end", () => {
            const headers = new Headers();
            for (const [name, value] of Object.entries(response.headers)) {
              if (Array.isArray(value)) for (const v of value) headers.append(name, v);
              else if (value !== undefined) headers.set(name, value);
            }
            const status = response.statusCode ?? 502;
            const body = [101, 204, 205, 304].includes(status) ? null : Buffer.concat(chunks);
            resolvePromise(
              new Response(body, {
                status: status < 200 || status > 599 ? 502 : status,
                statusText: response.statusMessage ?? "",
                headers,
              }),
            );
          });
        },
      );
      request.on("error", reject);
      request.end();
    });
  };

  return { resolve, fetch: fetchChecked };
}
