/**
 * Decodes one response from its datagrams in arrival order (what `gsindex decode` and the capture
 * tests do): single packets and split fragments alike go through a SplitAssembler, and the first
 * complete payload is decoded. A response still missing fragments at the end is TRUNCATED.
 */
import { ProtocolError } from "../errors";
import { decodeResponse, type A2SResponse } from "./a2s-response";
import type { DecodeContext } from "./a2s-player";
import { SplitAssembler, type SplitAssemblerOptions } from "./split-packet";

/** Decodes the first complete response among `datagrams` (arrival order); throws ProtocolError, TRUNCATED when fragments are missing. */
export function decodeDatagrams(
  datagrams: readonly Buffer[],
  context: DecodeContext = {},
  options: SplitAssemblerOptions = {},
): A2SResponse {
  if (datagrams.length === 0)
    throw new ProtocolError("TRUNCATED", "no datagrams to decode", { offset: 0 });
  const assembler = new SplitAssembler(options);
  for (const datagram of datagrams) {
    const payload = assembler.push(datagram);
    if (payload !== null) return decodeResponse(payload, context);
  }
  throw new ProtocolError(
    "TRUNCATED",
    `split response incomplete after ${datagrams.length} datagram(s): ${assembler.describePending() || "fragment 0 never arrived"}`,
  );
}
