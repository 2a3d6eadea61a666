// A 429 retried after Retry-After; exhausted retries give the typed error.
import { test } from "node:test";
import assert from "node:assert/strict";
import { RateLimitError } from "../dist/index.js";
import { baseUrl, client, env } from "./helpers.mjs";

test("a 429 is retried after its Retry-After", async () => {
  const key = env("KEY_RETRY");
  // Fill the key's rate window (100 a minute) with raw requests: up to
  // 300, as a window may end while it fills.
  let limited;
  for (let i = 0; i < 300 && !limited; i += 10) {
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => fetch(`${baseUrl()}/v1/categories/all`, { headers: { authorization: `Bearer ${key}` } })),
    );
    for (const a of answers) {
      await a.arrayBuffer();
      if (a.status === 429) limited = a;
    }
  }
  assert.ok(limited, "the window filled");
  const retryAfter = Number(limited.headers.get("retry-after"));
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);

  // Without retries the caller gets the typed error at once.
  const impatient = client("KEY_RETRY", { retry: { maxRetries: 0 } });
  const err = await impatient.categories().catch((e) => e);
  assert.ok(err instanceof RateLimitError, String(err));
  assert.equal(err.status, 429);
  assert.equal(err.code, "rate_limited");
  assert.ok(err.retryAfter >= 1);

  const retries = [];
  // A per-attempt timeout shorter than the wait: the wait is not an attempt.
  const c = client("KEY_RETRY", { timeoutMs: 1500, retry: { maxRetries: 2, maxRetryAfterMs: 70_000, onRetry: (r) => retries.push(r) } });
  const started = Date.now();
  const cats = await c.categories();
  const waited = Date.now() - started;
  assert.ok(cats.data.length > 0);
  assert.equal(retries.length, 1, JSON.stringify(retries));
  assert.equal(retries[0].status, 429);
  assert.ok(retries[0].delayMs >= err.retryAfter * 1000 - 1000, `waited ${retries[0].delayMs} ms for Retry-After ${err.retryAfter}`);
  assert.ok(waited >= retries[0].delayMs);
  assert.equal(c.rate.remaining, 99, "the call after the wait opened a new window");
});

test("a connection error is retried with backoff, then thrown typed", async () => {
  const { ConnectionError } = await import("../dist/index.js");
  const retries = [];
  const { Client } = await import("../dist/index.js");
  // A port nothing listens on.
  const c = new Client({ baseUrl: "http://127.0.0.1:9", apiKey: "x", retry: { maxRetries: 2, baseDelayMs: 10, onRetry: (r) => retries.push(r) } });
  const err = await c.categories().catch((e) => e);
  assert.ok(err instanceof ConnectionError, String(err));
  assert.equal(retries.length, 2);
});

test("an attempt past its timeout throws TimeoutError, not retried, and the client's next call is answered", async () => {
  const { TimeoutError } = await import("../dist/index.js");
  const retries = [];
  // No answer comes within a millisecond: the client's timer fires first.
  const hasty = client("KEY", { timeoutMs: 1, retry: { onRetry: (r) => retries.push(r) } });
  const err = await hasty.categories().catch((e) => e);
  assert.ok(err instanceof TimeoutError, String(err));
  assert.match(err.message, /timed out after 1 ms/);
  assert.equal(retries.length, 0, "a timeout is the caller's to handle");
  const c = client("KEY", { timeoutMs: 30_000 });
  assert.ok((await c.categories()).data.length > 0);
  assert.ok((await c.categories()).data.length > 0, "a second call on the same timer");
});
