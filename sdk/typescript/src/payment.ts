// Pay-per-request: a 402 answer becomes a paid retry through @x402/fetch
// (x402 v2: the PAYMENT-REQUIRED challenge is signed by the x402 client's
// registered scheme and sent back as PAYMENT-SIGNATURE). @x402/fetch is
// loaded on the first request of a paying client only.

import type { FetchLike } from "./transport.js";

export interface PaymentOptions {
  /** An x402Client (or x402HTTPClient) from @x402/fetch with the payer's
   * scheme registered, e.g. registerExactEvmScheme(client, { signer }) from
   * @x402/evm/exact/client, and its spend controls set. */
  client: unknown;
}

export function payingFetch(base: FetchLike, o: PaymentOptions): FetchLike {
  let wrapped: Promise<(input: Request) => Promise<Response>> | undefined;
  return async (request: Request) => {
    wrapped ??= import("@x402/fetch").then((m) => m.wrapFetchWithPayment(base as typeof fetch, o.client as never) as (input: Request) => Promise<Response>);
    return (await wrapped)(request);
  };
}

/** paymentResponse decodes the PAYMENT-RESPONSE header of a paid answer
 * (the settlement: transaction, network, payer), or undefined. */
export async function paymentResponse(response: Response): Promise<Record<string, unknown> | undefined> {
  const h = response.headers.get("payment-response") ?? response.headers.get("x-payment-response");
  if (!h) return undefined;
  const { decodePaymentResponseHeader } = await import("@x402/fetch");
  return decodePaymentResponseHeader(h) as unknown as Record<string, unknown>;
}
