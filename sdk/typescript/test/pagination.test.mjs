// A cursor walk: three pages, no gap, no duplicate, `since` kept.
import { test } from "node:test";
import assert from "node:assert/strict";
import { client, demo } from "./helpers.mjs";

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
  const { id } = await demo();
  // A window that ends in a few pages: from the entity's fifth newest event on.
  const newest = await c.timeline({ id, limit: 5 });
  assert.equal(newest.data.length, 5, `entity ${id} has at least 5 events`);
  const since = newest.data[4].latestEvidenceTimestamp;
  const whole = await c.timeline({ id, since, limit: 50 });
  assert.ok(whole.data.length >= 5 && whole.next_cursor === null);
  const seen = [];
  let pages = 0;
  for await (const page of c.pages("timeline", { id, since, limit: 2 })) {
    pages++;
    seen.push(...page.data.map((e) => e.id));
    assert.ok(pages <= 26, "the walk stops");
  }
  const items = [];
  for await (const e of c.paginate("timeline", { id, since, limit: 2 })) items.push(e.id);
  assert.deepEqual(seen, whole.data.map((e) => e.id));
  assert.deepEqual(items, seen);
  assert.ok(pages >= 3);
});
