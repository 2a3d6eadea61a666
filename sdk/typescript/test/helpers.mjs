// What the tests share: the live server's address and keys (set by
// tests/sdk_typescript_test.go, whose server's database the demo seeder
// filled), what the tests call with read from the demo data (demo), a
// client, ingesting events through /admin/ingest, and a TCP proxy whose
// connections a test can cut.
import net from "node:net";
import { Client } from "../dist/index.js";

export const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run these tests through go test ./tests -run TestSDKTypeScript (make test)`);
  return v;
};

export const baseUrl = () => env("BASE_URL");

export const client = (key = "KEY", options = {}) => new Client({ baseUrl: baseUrl(), apiKey: env(key), ...options });

let facts;
/** demo reads what the tests call with from the live demo data, with plain
 * fetch: of the owners of the newest events, the one owning the most of
 * them whose timeline holds more than ten events (to page through) as
 * { id, name }, another owner (other) and a category of its events. */
export function demo() {
  facts ??= (async () => {
    const get = async (path) => {
      const r = await fetch(`${baseUrl()}${path}`, { headers: { authorization: `Bearer ${env("KEY")}` }, signal: AbortSignal.timeout(30_000) });
      if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
      return (await r.json()).data;
    };
    const latest = await get("/v1/latest?limit=50&legacy=false");
    const count = new Map();
    for (const ev of latest) for (const o of ev.owners) count.set(o.id, (count.get(o.id) ?? 0) + 1);
    const owners = [...count].sort((a, b) => b[1] - a[1]).map(([o]) => o);
    let id;
    for (const o of owners) {
      const r = await fetch(`${baseUrl()}/v1/timeline/byOrganizationId?id=${o}&limit=10&legacy=false`, {
        headers: { authorization: `Bearer ${env("KEY")}` }, signal: AbortSignal.timeout(30_000),
      });
      const t = await r.json();
      if (t.data?.length === 10 && t.next_cursor) {
        id = o;
        break;
      }
    }
    if (id === undefined) throw new Error(`no owner of the newest demo events has more than ten events: ${[...count]}`);
    const other = owners.find((o) => o !== id);
    const category = latest.find((ev) => ev.owners.some((o) => o.id === id)).eventCategory;
    const name = (await get(`/v1/entities/byId?id=${id}`)).canonicalName;
    return { id, name, other, category };
  })();
  return facts;
}

let seq = 0;
/** ingest posts events through /admin/ingest and returns their ids: events
 * 20 days old, so they stay out of the windows the pagination tests walk
 * while the stream tests (which get every ingested event) run beside them. */
export async function ingest(n, { category = "funding", significance } = {}) {
  const ids = [];
  const lines = [];
  for (let i = 0; i < n; i++) {
    const id = 800_000 + process.pid * 100 + ++seq;
    ids.push(id);
    const ev = {
      kind: "event", id, title: `SDK live event ${id}`, eventCategory: category, eventSubcategory: "general",
      summary: `Summary of ${id}.`, bullets: ["one"], owners: [(await demo()).other], participants: [],
      evidence: [{ id: id * 10, content: "post", url: `https://example.org/${id}`, timestamp: new Date(Date.now() - 20 * 86400_000).toISOString() }],
    };
    if (significance !== undefined) ev.significance = significance;
    lines.push(JSON.stringify(ev));
  }
  const r = await fetch(`${baseUrl()}/admin/ingest`, {
    method: "POST",
    signal: AbortSignal.timeout(30_000),
    headers: { authorization: `Bearer ${env("ADMIN_TOKEN")}` },
    body: lines.join("\n") + "\n",
  });
  if (!r.ok) throw new Error(`ingest: ${r.status} ${await r.text()}`);
  return ids;
}

/** proxy forwards a local port to the server; cut() resets every open
 * connection (the client sees its stream dropped). */
export async function proxy() {
  const target = new URL(baseUrl());
  const sockets = new Set();
  const server = net.createServer((c) => {
    const u = net.connect(Number(target.port), target.hostname);
    sockets.add(c);
    sockets.add(u);
    c.pipe(u);
    u.pipe(c);
    const end = () => {
      c.destroy();
      u.destroy();
      sockets.delete(c);
      sockets.delete(u);
    };
    c.on("error", end).on("close", end);
    u.on("error", end).on("close", end);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    cut() {
      for (const s of sockets) s.resetAndDestroy ? s.resetAndDestroy() : s.destroy();
      sockets.clear();
    },
    close() {
      this.cut();
      server.close();
    },
  };
}
