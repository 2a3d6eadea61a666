// Webhook signature verification: one function, over the raw body, in
// constant time (docs/api/webhooks.md#verifying-a-delivery).

import { createHmac, timingSafeEqual } from "node:crypto";
import { WebhookSignatureError } from "./errors.js";

/** A delivery's JSON body. */
export interface WebhookDelivery {
  event_type: string;
  event?: unknown;
  timestamp?: string;
  [key: string]: unknown;
}

export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** The Standard Webhooks timestamp's allowed skew in seconds (default 300). */
  toleranceSeconds?: number;
  /** The time to check the timestamp against (default now). */
  now?: Date;
}

function header(h: HeaderSource, name: string): string | undefined {
  if (typeof (h as Headers).get === "function") return (h as Headers).get(name) ?? undefined;
  for (const [k, v] of Object.entries(h)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v[0] : v;
  }
  return undefined;
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * verifyWebhook checks a delivery against the webhook's secret and returns
 * its parsed body, or throws WebhookSignatureError. `rawBody` is the body
 * exactly as received (before any JSON parsing). X-Service-Signature
 * (sha256=HMAC-SHA256 hex keyed with the secret) is checked; when the
 * Standard Webhooks headers (webhook-id, webhook-timestamp,
 * webhook-signature) are present they must match too, with the timestamp
 * within the tolerance (replay protection).
 */
export function verifyWebhook(secret: string, rawBody: string | Uint8Array, headers: HeaderSource, options: VerifyOptions = {}): WebhookDelivery {
  const body = typeof rawBody === "string" ? Buffer.from(rawBody) : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  const sig = header(headers, "x-service-signature");
  const stdSig = header(headers, "webhook-signature");
  if (!sig && !stdSig) throw new WebhookSignatureError("no X-Service-Signature or webhook-signature header");
  if (sig !== undefined) {
    const want = "sha256=" + createHmac("sha256", secret).update(body).digest("hex");
    if (!equal(want, sig)) throw new WebhookSignatureError("X-Service-Signature does not match the body");
  }
  if (stdSig !== undefined) {
    const id = header(headers, "webhook-id") ?? "";
    const ts = header(headers, "webhook-timestamp") ?? "";
    const sec = Number(ts);
    if (!/^\d+$/.test(ts)) throw new WebhookSignatureError("bad webhook-timestamp");
    const now = (options.now ?? new Date()).getTime() / 1000;
    if (Math.abs(now - sec) > (options.toleranceSeconds ?? 300)) throw new WebhookSignatureError("webhook-timestamp outside the tolerance");
    const raw = secret.startsWith("whsec_") ? secret.slice(6) : secret;
    const key = /^[A-Za-z0-9+/]*={0,2}$/.test(raw) && raw.length % 4 === 0 ? Buffer.from(raw, "base64") : Buffer.from(raw);
    const want = "v1," + createHmac("sha256", key).update(`${id}.${ts}.`).update(body).digest("base64");
    if (!stdSig.split(" ").some((s) => equal(want, s))) throw new WebhookSignatureError("webhook-signature does not match the body");
  }
  try {
    return JSON.parse(body.toString("utf8")) as WebhookDelivery;
  } catch (err) {
    throw new WebhookSignatureError("the signed body is not JSON", { cause: err });
  }
}
