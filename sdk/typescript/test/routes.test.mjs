// Every /v1 route called once through its method, and the typed errors.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  routes, legacyRoutes, cursorRoutes, BadRequestError, UnauthorizedError, ForbiddenError, NotFoundError, PayloadTooLargeError, ApiError, Client,
} from "../dist/index.js";
import { client, demo, env, baseUrl } from "./helpers.mjs";

const openapi = JSON.parse(readFileSync(new URL("../../openapi.json", import.meta.url), "utf8"));

test("one method per /v1 route of the OpenAPI document", () => {
  const documented = [];
  for (const [path, item] of Object.entries(openapi.paths)) {
    for (const method of Object.keys(item)) if (path !== "/v1/stream") documented.push(`${method} ${path}`);
  }
  const methods = Object.values(routes).map(([m, p]) => `${m} ${p}`);
  assert.deepEqual([...methods].sort(), documented.sort());
  const legacy = Object.entries(routes)
    .filter(([, [m, p]]) => openapi.paths[p][m].parameters?.some((x) => x.name === "legacy"))
    .map(([name]) => name);
  const c = client();
  for (const name of Object.keys(routes)) assert.equal(typeof c[name], "function", name);
  // The lean shape is asked for exactly on the routes that take `legacy`,
  // and the walks are exactly the routes with `cursor` and `next_cursor`.
  assert.deepEqual([...legacyRoutes].sort(), legacy.sort());
  const walks = Object.entries(routes)
    .filter(([, [m, p]]) => openapi.paths[p][m].parameters?.some((x) => x.name === "cursor"))
    .map(([name]) => name);
  assert.deepEqual([...cursorRoutes].sort(), walks.sort());
  // The version follows the API's.
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  assert.equal(pkg.version.split(".").slice(0, 2).join("."), openapi.info.version.split(".").slice(0, 2).join("."));
});

test("every route called once", async () => {
  const c = client();
  const d = await demo();
  const since = new Date(Date.now() - 3 * 86400_000).toISOString();
  const called = new Set();
  const call = async (name, params) => {
    called.add(name);
    return c[name](params);
  };
  const cats = await call("categories");
  assert.ok(cats.data.length > 0);
  const category = cats.data[0].name ?? cats.data[0];
  const ent = await call("entityById", { id: d.id });
  assert.equal(ent.data.canonicalName, d.name);
  await call("entitiesByName", { name: d.name, limit: 2 });
  assert.equal((await call("entityByTopName", { name: d.name })).data.id, d.id);
  await call("entityMedia", { id: d.id, limit: 2 });
  await call("entityReferences", { id: d.id });
  await call("entityRelationships", { id: d.id, limit: 2 });
  await call("entityResearch", { id: d.id, limit: 2 });
  const radar = await call("radarAll", { since, limit: 3 });
  assert.ok(radar.data.length > 0, "the demo has radar events");
  // The lean shape by default: no legacy aliases …
  assert.equal(radar.data[0].globalSummary, undefined);
  assert.equal(typeof radar.data[0].summary, "string");
  // … and the full one on request.
  const full = await c.radarAll({ since, limit: 1, legacy: true });
  assert.equal(typeof full.data[0].globalSummary, "string");
  const legacyClient = new Client({ baseUrl: baseUrl(), apiKey: env("KEY"), legacy: true });
  assert.equal(typeof (await legacyClient.radarAll({ since, limit: 1 })).data[0].globalSummary, "string");
  await call("radarByCategory", { category, limit: 2 });
  await call("radarByOrganization", { id: d.id, limit: 2 });
  await call("replayGlobal", { since, limit: 2 });
  await call("search", { query: d.name, limit: 2 });
  await call("signalAll", { since, limit: 2 });
  await call("signalByCategory", { category, limit: 2 });
  await call("signalByOrganization", { id: d.id, limit: 2 });
  await call("signalLatest", { limit: 2 });
  await call("signalTop", { limit: 2 });
  await call("latest", { limit: 2 });
  await call("timeline", { id: d.id, limit: 2 });
  await call("brief", { id: d.id, since, limit: 2 });
  await call("briefBatch", { ids: [d.id, d.other], since, limit: 2 });
  await call("organizations", { limit: 2 });
  const org = await call("organizationById", { id: d.id, include: ["radar", "signal"] });
  assert.ok(Array.isArray(org.radar) && Array.isArray(org.signal), "include=radar,signal is sent comma-joined");
  await call("organizationsByName", { name: "a", limit: 2 });
  assert.equal((await call("organizationSignalHistory", { id: d.id, days: 7 })).data.organizationId, d.id);
  await call("marketViews", { limit: 2 });
  await call("marketViewsByOrganization", { id: d.id });
  const usage = await call("usage");
  assert.ok(usage.data);
  // The rate window and credits of the last answer.
  assert.equal(c.rate.limit, 100);
  assert.ok(c.rate.remaining >= 0 && c.rate.remaining < 100);
  assert.ok(c.rate.monthlyLimit > 0);
  assert.equal(c.rate.plan, "enterprise");
  assert.match(c.rate.requestId, /.+/);

  const ticket = await call("createStreamTicket", { path: "/v1/stream", query: "surface=signal" });
  assert.match(ticket.data.url, /ticket=/);

  await call("keys", { limit: 5 });
  await call("keysAudit", { limit: 5 });
  const created = await call("createKey", { surfaces: ["lookup"], expiresInSeconds: 3600 });
  const keyId = created.data.id;
  const rotated = await call("rotateKey", { id: keyId, graceSeconds: 0 });
  assert.notEqual(rotated.data.id, keyId);
  assert.equal((await call("revokeKey", { id: rotated.data.id, reason: "sdk test" })).data.status, "revoked");

  const job = await call("createExportJob", { body: { scope: "signal.history", since, format: "jsonl" } });
  assert.ok(job.data.id);
  const jobs = await call("exportJobs", { limit: 2 });
  assert.ok(jobs.data.some((j) => j.id === job.data.id));
  assert.equal((await call("exportJob", { id: job.data.id })).data.id, job.data.id);

  const wh = await call("createWebhook", { body: { url: "http://127.0.0.1:9/hook", event_types: ["radar"] } });
  const whId = wh.data.id;
  assert.match(wh.data.secret, /^whsec_/);
  assert.ok((await call("webhooks")).data.some((w) => w.id === whId));
  assert.equal((await call("webhook", { id: whId, limit: 5 })).data.id, whId);
  await call("updateWebhook", { id: whId, body: { active: false } });
  await call("rotateWebhookSecret", { id: whId });
  const ping = await call("testWebhook", { id: whId });
  assert.equal(ping.data.event_type, "ping");
  // A pending delivery cannot be redelivered yet (webhook.test.mjs redelivers a delivered one).
  const pending = await call("redeliverWebhook", { id: whId, deliveryId: ping.data.id }).catch((e) => e);
  assert.ok(pending instanceof BadRequestError, String(pending));
  assert.match(pending.message, /pending/);
  await call("deleteWebhook", { id: whId });

  assert.deepEqual([...called].sort(), Object.keys(routes).sort());
});

test("typed errors carry the server's message, code and request id", async () => {
  const c = client("KEY_ERRORS");
  const bad = await c.radarAll({ since: "yesterday" }).catch((e) => e);
  assert.ok(bad instanceof BadRequestError, String(bad));
  assert.equal(bad.status, 400);
  assert.equal(bad.code, "invalid");
  assert.match(bad.message, /since/);
  assert.match(bad.requestId, /.+/);

  const anon = new Client({ baseUrl: baseUrl(), apiKey: "ci_not_a_key" });
  const unauth = await anon.categories().catch((e) => e);
  assert.ok(unauth instanceof UnauthorizedError, String(unauth));
  assert.equal(unauth.code, "unauthorized");

  const free = client("FREE_KEY");
  const forbidden = await free.brief({ id: (await demo()).id, since: new Date(Date.now() - 86400_000).toISOString() }).catch((e) => e);
  assert.ok(forbidden instanceof ForbiddenError, String(forbidden));
  assert.equal(forbidden.code, "forbidden");
  assert.match(forbidden.requestId, /.+/);

  const missing = await c.entityById({ id: 987654321 }).catch((e) => e);
  assert.ok(missing instanceof NotFoundError, String(missing));
  assert.equal(missing.code, "not_found");

  const big = await c.createWebhook({ body: { url: "http://127.0.0.1:9/" + "x".repeat(2 << 20), event_types: ["radar"] } }).catch((e) => e);
  assert.ok(big instanceof PayloadTooLargeError, String(big));
  assert.equal(big.status, 413);
  assert.equal(big.code, "too_large");

  // None of them was retried: one request each.
  let sent = 0;
  const counting = new Client({ baseUrl: baseUrl(), apiKey: env("KEY_ERRORS"), fetch: (r) => (sent++, fetch(r)) });
  await counting.entityById({ id: 987654321 }).catch(() => {});
  assert.equal(sent, 1);
});
