// One request paid through the 402 hook (@x402/fetch), without an API key,
// on the payment interop's local chain (tests/interop/payments).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import path from "node:path";
import { Client, PaymentRequiredError, paymentResponse } from "../dist/index.js";
import { baseUrl, env } from "./helpers.mjs";

// The payer's scheme and key come from the payment interop's packages
// (@x402/evm, viem): the library itself depends on @x402/fetch only.
async function fromPayments(spec) {
  const require = createRequire(path.join(env("PAYMENTS_DIR"), "package.json"));
  return import(pathToFileURL(require.resolve(spec)).href);
}

test("a 402 becomes a paid retry through the x402 hook", async () => {
  const unpaid = new Client({ baseUrl: baseUrl() });
  const refused = await unpaid.search({ query: "eth", limit: 1 }).catch((e) => e);
  assert.ok(refused instanceof PaymentRequiredError, String(refused));
  assert.equal(refused.status, 402);
  assert.equal(refused.code, "payment_required");

  const { x402Client } = await import("@x402/fetch");
  const { registerExactEvmScheme } = await fromPayments("@x402/evm/exact/client");
  const { privateKeyToAccount } = await fromPayments("viem/accounts");
  const payer = new x402Client();
  registerExactEvmScheme(payer, { signer: privateKeyToAccount(env("PAYER_KEY")) });
  payer.setSpendControls({
    allowedAssets: [{ network: `eip155:${env("CHAIN_ID")}`, asset: env("PAYMENT_TOKEN"), maxAmountPerPayment: "1000000" }],
  });
  const c = new Client({ baseUrl: baseUrl(), payment: { client: payer } });
  const r = await c.search({ query: "eth", limit: 1 });
  assert.ok(Array.isArray(r.data));
  const settlement = await paymentResponse(c.lastResponse);
  assert.ok(settlement, "the answer carries PAYMENT-RESPONSE");
  assert.equal(settlement.success, true);
});
