// /v1/stream as an async iterator that resumes: after a dropped
// connection (or a close the server asks to resume from) it reconnects
// with Last-Event-ID, the cursor of the last message, so nothing is lost
// and nothing comes twice.

import { ConnectionError, StreamClosedError } from "./errors.js";
import { readSSE } from "./sse.js";
import { backoff, sleep } from "./transport.js";
import type { Client } from "./client.js";
import type { components } from "./generated/openapi.js";

export interface ResumeOptions {
  /** Consecutive failed reconnections before giving up (default 10). */
  maxReconnects?: number;
  /** First reconnection wait in ms (default: the server's `retry`, else
   * 1000); later ones back off exponentially, with jitter. */
  reconnectDelayMs?: number;
  /** Called on each reconnection, with the cursor resumed from. */
  onReconnect?: (info: { attempt: number; cursor: string | undefined; error?: unknown }) => void;
  signal?: AbortSignal;
}

export interface StreamOptions extends ResumeOptions {
  /** radar (default) or signal. */
  surface?: "radar" | "signal";
  category?: string;
  organizationId?: number;
  /** Start after this cursor (a message's `id`, or GraphQL's streamCursor). */
  cursor?: string;
  /** true: events with their legacy aliases too (default: the client's). */
  legacy?: boolean;
}

export interface StreamMessage {
  /** The cursor of this event: resume after it with `cursor`. */
  id: string;
  event: components["schemas"]["Event"];
}

/** The close codes after which resuming is what to do (docs/api/live-push.md). */
export const resumableCodes = new Set(["slow_consumer", "shutting_down", "unavailable"]);

export async function* streamEvents(client: Client, o: StreamOptions): AsyncGenerator<StreamMessage, void, undefined> {
  const q = new URLSearchParams();
  if (o.surface) q.set("surface", o.surface);
  if (o.category) q.set("category", o.category);
  if (o.organizationId !== undefined) q.set("organizationId", String(o.organizationId));
  q.set("legacy", String(o.legacy ?? false));
  let cursor = o.cursor;
  let failures = 0;
  let serverRetry: number | undefined;
  const abort = new AbortController();
  const signal = o.signal ? AbortSignal.any([o.signal, abort.signal]) : abort.signal;
  try {
    for (;;) {
      let dropped: unknown;
      try {
        const headers: Record<string, string> = { accept: "text/event-stream" };
        if (cursor) headers["last-event-id"] = cursor;
        const response = await client.open(`/v1/stream?${q}`, { method: "GET", headers, signal });
        if (!response.ok) throw await client.errorOf(response);
        for await (const m of readSSE(response.body!)) {
          if (m.retry !== undefined) serverRetry = m.retry;
          if (m.event === "close") {
            const c = JSON.parse(m.data) as { error: string; code: string; cursor?: string };
            if (c.cursor) cursor = c.cursor;
            if (!resumableCodes.has(c.code)) throw new StreamClosedError(c.error, c.code, cursor);
            dropped = new StreamClosedError(c.error, c.code, cursor);
            break;
          }
          if (m.id !== undefined) cursor = m.id;
          if (m.event === "message" && m.data !== "") {
            failures = 0;
            yield { id: m.id ?? cursor!, event: JSON.parse(m.data) };
          }
        }
      } catch (err) {
        if (signal.aborted) return;
        dropped = dropOf(err);
      }
      if (signal.aborted) return;
      failures++;
      await reconnectWait("stream", failures, o, cursor, dropped, signal, serverRetry);
    }
  } finally {
    abort.abort();
  }
}

/** dropOf returns err when a reconnect may fix it (a connection error, or
 * a connection dropped while reading); else it throws err. */
export function dropOf(err: unknown): unknown {
  if (!(err instanceof ConnectionError) && !isDrop(err)) throw err;
  return err;
}

/** reconnectWait is the reconnect policy of streams and subscriptions: the
 * failures-th drop in a row throws past maxReconnects (default 10), else is
 * reported to onReconnect and waited for: reconnectDelayMs (else the
 * server's `retry`, else 1000 ms) the first time, then that plus a backoff
 * capped at 30 s. */
export async function reconnectWait(
  what: string,
  failures: number,
  o: ResumeOptions,
  cursor: string | undefined,
  dropped: unknown,
  signal: AbortSignal,
  serverRetry?: number,
): Promise<void> {
  if (failures > (o.maxReconnects ?? 10)) throw new ConnectionError(`${what} dropped ${failures} times in a row`, { cause: dropped });
  o.onReconnect?.({ attempt: failures, cursor, error: dropped });
  const first = o.reconnectDelayMs ?? serverRetry ?? 1000;
  await sleep(failures === 1 ? first : first + backoff(failures - 1, { baseDelayMs: first, maxDelayMs: 30_000 }), signal).catch(() => {});
}

/** isDrop reports whether err is a connection dropped while reading. */
export function isDrop(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === "TypeError" || err.name === "AbortError") return true;
  const code = (err as { code?: string }).code ?? ((err as { cause?: { code?: string } }).cause?.code);
  return typeof code === "string" && /^(ECONNRESET|EPIPE|ECONNREFUSED|UND_ERR_SOCKET|UND_ERR_)/.test(code);
}
