// A real delivery verified with its secret; a tampered one refused.
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { verifyWebhook, WebhookSignatureError } from "../dist/index.js";
import { client } from "./helpers.mjs";

test("a webhook delivery is verified and a tampered one refused", async () => {
  const deliveries = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      deliveries.push({ body: Buffer.concat(chunks), headers: req.headers });
      res.writeHead(204).end();
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  try {
    const c = client("KEY_WEBHOOK");
    const wh = await c.createWebhook({ body: { url: `http://127.0.0.1:${server.address().port}/hook`, event_types: ["radar"] } });
    const secret = wh.data.secret;
    const ping = await c.testWebhook({ id: wh.data.id });
    // Radar events other tests ingest may be delivered too: the ping is
    // the delivery with its id.
    const of = (id) => deliveries.filter((d) => d.headers["x-service-delivery"] === id);
    for (let i = 0; i < 300 && of(ping.data.id).length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(of(ping.data.id).length, 1, "the ping was delivered");
    const { body, headers } = of(ping.data.id)[0];
    assert.match(headers["x-service-signature"], /^sha256=/);

    const delivery = verifyWebhook(secret, body, headers);
    assert.ok(delivery.event_type);
    // A string body and a Headers object work the same.
    verifyWebhook(secret, body.toString("utf8"), new Headers(headers));

    const tampered = Buffer.from(body.toString("utf8").replace(/"event_type":"/, '"event_type":"x'));
    assert.notDeepEqual(tampered, body);
    assert.throws(() => verifyWebhook(secret, tampered, headers), WebhookSignatureError);
    assert.throws(() => verifyWebhook("whsec_another", body, headers), WebhookSignatureError);
    assert.throws(() => verifyWebhook(secret, body, {}), WebhookSignatureError);
    // An old Standard Webhooks timestamp is a replay.
    if (headers["webhook-timestamp"]) {
      assert.throws(() => verifyWebhook(secret, body, headers, { now: new Date(Date.now() + 3600_000) }), WebhookSignatureError);
    }
    // Redelivered under the same delivery id, signed again.
    // The receiver answered; the delivery is marked succeeded just after.
    let detail;
    let delivered;
    for (let i = 0; i < 60 && !delivered; i++) {
      if (i) await new Promise((r) => setTimeout(r, 500));
      detail = await c.webhook({ id: wh.data.id });
      delivered = detail.data.deliveries.find((d) => d.id === ping.data.id && d.status === "succeeded");
    }
    assert.ok(delivered, JSON.stringify(detail.data.deliveries));
    await c.redeliverWebhook({ id: wh.data.id, deliveryId: delivered.id });
    for (let i = 0; i < 300 && of(ping.data.id).length < 2; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(of(ping.data.id).length, 2, "redelivered under the same delivery id");
    assert.equal(verifyWebhook(secret, of(ping.data.id)[1].body, of(ping.data.id)[1].headers).event_type, "ping");
    await c.deleteWebhook({ id: wh.data.id });
  } finally {
    server.close();
  }
});
