// A cursor walk: three pages, no gap, no duplicate, `since` kept.
import { test } from "node:test";
import assert from "node:assert/strict";
import { client } from "./helpers.mjs";

test("a 3-page cursor walk with no gap or duplicate", async () => {
  const c = client("KEY_PAGES");
  const since = new Date(Date.now() - 6 * 86400_000).toISOString();
  // The same events in one page: what the walk must reproduce.
  const whole = await c.radarAll({ since, limit: 6 });
  assert.ok(whole.data.length >= 6, "the demo has at least 6 radar events in the window");
  const sent = [];
  const walking = client("KEY_PAGES", { fetch: (r) => (sent.push(new URL(r.url)), fetch(r)) });
  const pages = [];
  for await (const page of walking.pages("radarAll", { since, limit: 2 })) {
    pages.push(page);
    if (pages.length === 3) break;
  }
  assert.equal(pages.length, 3);
  const ids = pages.flatMap((p) => p.data.map((e) => e.id));
  assert.deepEqual(ids, whole.data.slice(0, 6).map((e) => e.id));
  assert.equal(new Set(ids).size, ids.length);
  // Every page was asked with the first page's since and the previous cursor.
  for (const u of sent) assert.equal(u.searchParams.get("since"), since);
  assert.equal(sent[1].searchParams.get("cursor"), pages[0].next_cursor);
  assert.equal(sent[2].searchParams.get("cursor"), pages[1].next_cursor);
});

test("paginate yields items and stops at a null cursor", async () => {
  const c = client("KEY_PAGES");
  // A window that ends in a few pages.
  const first = await c.timeline({ id: 101, limit: 25 });
  const seen = [];
  let pages = 0;
  for await (const page of c.pages("timeline", { id: 101, limit: 25 })) {
    pages++;
    seen.push(...page.data.map((e) => e.id));
    if (page.next_cursor === null) break;
  }
  const items = [];
  for await (const e of c.paginate("timeline", { id: 101, limit: 25 })) items.push(e.id);
  assert.deepEqual(items, seen);
  assert.equal(new Set(items).size, items.length);
  assert.deepEqual(items.slice(0, first.data.length), first.data.map((e) => e.id));
  assert.ok(pages >= 1);
});
