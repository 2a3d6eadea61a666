// /v1/stream and a GraphQL subscription resumed after their connection is
// cut: every event once, in order.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client, documents } from "../dist/index.js";
import { demo, env, ingest, proxy } from "./helpers.mjs";

test("/v1/stream resumes with Last-Event-ID after the connection is cut", { timeout: 30_000 }, async () => {
  const p = await proxy();
  const reconnects = [];
  const c = new Client({ baseUrl: p.url, apiKey: env("KEY_STREAM") });
  const it = c.stream({ reconnectDelayMs: 200, onReconnect: (r) => reconnects.push(r) });
  const got = [];
  const reading = (async () => {
    for await (const m of it) {
      got.push(m);
      if (got.length === 6) break;
    }
  })();
  await new Promise((r) => setTimeout(r, 500)); // the stream is open
  const first = await ingest(3);
  while (got.length < 3) await new Promise((r) => setTimeout(r, 50));
  p.cut();
  // Events ingested while the client is away.
  const second = await ingest(3);
  await reading;
  p.close();
  assert.ok(reconnects.length >= 1, "the client reconnected");
  assert.equal(reconnects[0].cursor, got[2].id, "from the last event's cursor");
  assert.deepEqual(got.map((m) => m.event.id), [...first, ...second]);
  assert.equal(got[0].event.globalSummary, undefined, "the lean shape");
});

test("a GraphQL subscription resumes from its last cursor after the connection is cut", { timeout: 30_000 }, async () => {
  const p = await proxy();
  const reconnects = [];
  const c = new Client({ baseUrl: p.url, apiKey: env("KEY_STREAM") });
  const it = c.graphql.subscribe(documents.EventsDocument, { surface: "RADAR" }, { reconnectDelayMs: 200, onReconnect: (r) => reconnects.push(r) });
  const got = [];
  const reading = (async () => {
    for await (const m of it) {
      got.push(m);
      if (got.length === 4) break;
    }
  })();
  await new Promise((r) => setTimeout(r, 800));
  const first = await ingest(2);
  while (got.length < 2) await new Promise((r) => setTimeout(r, 50));
  p.cut();
  const second = await ingest(2);
  await reading;
  p.close();
  assert.ok(reconnects.length >= 1);
  assert.deepEqual(got.map((m) => m.data.events.id), [...first, ...second]);
  for (const m of got) assert.match(m.cursor, /.+/);
});

test("a typed GraphQL query", async () => {
  const c = new Client({ baseUrl: env("BASE_URL"), apiKey: env("KEY_STREAM") });
  const d = await demo();
  const r = await c.graphql.query(documents.EntityDocument, { id: d.id, relationships: 2 });
  assert.equal(r.entity.id, d.id);
  assert.ok(r.entity.relationships.length <= 2);
  const err = await c.graphql.query("{ nope }").catch((e) => e);
  assert.equal(err.name, "GraphQLError");
  assert.equal(err.code, "GRAPHQL_VALIDATION_FAILED");
});

test("a stream the server ends for good throws StreamClosedError with its code and cursor", { timeout: 30_000 }, async () => {
  const { StreamClosedError } = await import("../dist/index.js");
  const owner = new Client({ baseUrl: env("BASE_URL"), apiKey: env("KEY_STREAM") });
  const created = await owner.createKey({ surfaces: ["stream"], expiresInSeconds: 600 });
  const key = created.data.key;
  assert.match(key, /^ci_/, JSON.stringify(created).slice(0, 300));
  const c = new Client({ baseUrl: env("BASE_URL"), apiKey: key });
  const got = [];
  const ended = (async () => {
    for await (const m of c.stream({ reconnectDelayMs: 200 })) got.push(m);
  })().then(() => undefined, (e) => e);
  await new Promise((r) => setTimeout(r, 500));
  await ingest(1);
  while (got.length < 1) await new Promise((r) => setTimeout(r, 50));
  await owner.revokeKey({ id: created.data.id, reason: "sdk stream test" });
  await ingest(1);
  const err = await ended;
  assert.ok(err instanceof StreamClosedError, String(err));
  assert.equal(err.code, "unauthorized");
  assert.match(err.cursor, /.+/);
});
