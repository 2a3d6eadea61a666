// Compile-time checks of the typed methods (npm test runs tsc on this file
// with tsconfig.test.json; nothing here runs). Each @ts-expect-error line
// must be a type error, or tsc fails.
import { Client, documents, type Item, type Result } from "../src/index.js";

declare const c: Client;

export async function typed(): Promise<void> {
  const page = await c.radarAll({ since: "2026-11-20T00:00:00Z", limit: 2 });
  const id: number = page.data[0].id;
  const next: string | null = page.next_cursor;
  const title: string = page.data[0].title;
  // @ts-expect-error since is required on radarAll
  await c.radarAll({ limit: 2 });
  // @ts-expect-error limit is a number
  await c.radarAll({ since: "2026-11-20T00:00:00Z", limit: "2" });
  // @ts-expect-error no such parameter
  await c.entityById({ id: 101, nope: true });
  // @ts-expect-error id is required
  await c.entityById();
  await c.categories();
  const usage: Result<"usage"> = await c.usage();
  for await (const e of c.paginate("timeline", { id: 101 })) {
    const t: string = e.title;
    const item: Item<"timeline"> = e;
  }
  // @ts-expect-error not a cursor route
  c.paginate("categories", {});
  const { entity } = await c.graphql.query(documents.EntityDocument, { id: 101 });
  const name: string | undefined = entity?.canonicalName;
  // @ts-expect-error id is a number
  await c.graphql.query(documents.EntityDocument, { id: "101" });
  for await (const m of c.graphql.subscribe(documents.EventsDocument, { surface: "SIGNAL" })) {
    const s: number | null = m.data.events.significance;
  }
  for await (const m of c.stream({ surface: "signal" })) {
    const cursor: string = m.id;
    const eventId: number = m.event.id;
  }
  void [id, next, title, usage, name];
}
