// The x402 facilitator the payment tests run: x402's own verification and
// settlement code (@x402/core's x402Facilitator with @x402/evm's exact
// scheme, v2 under eip155:* and v1 under its network names), its signer
// submitting transferWithAuthorization to the local chain of chain.mjs.
//
//   node facilitator.mjs        prints one JSON line once ready:
//   {"url", "chainId", "token", "tokenName", "tokenVersion", "payer", "payerKey", "payTo"}
//
// HTTP API (the facilitator API x402 servers call):
//   POST /verify, POST /settle  {x402Version, paymentPayload, paymentRequirements}
//   GET  /supported
// and, for the tests only:
//   GET  /test/balance?address=0x…   {"balance": "<atomic units>"}
//   GET  /test/settlements            {"settled": n, "failed": n, "transactions": [...]}
//   POST /test/revert-next-settle     the next settlement reverts on chain (the
//                                     token is paused around it)
// It exits when its standard input closes (the test process ended).
import { createServer } from "node:http";

import { x402Facilitator } from "@x402/core/facilitator";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/facilitator";
import { privateKeyToAccount } from "viem/accounts";

import { chainId, keys, start, tokenName, tokenVersion } from "./chain.mjs";

const chain = await start();
const client = chain.wallet(keys.facilitator);
const signer = toFacilitatorEvmSigner(Object.assign(client, { address: client.account.address }), {
  confirmationTimeoutMs: 30_000,
});

let revertNext = false;
const stats = { settled: 0, failed: 0, transactions: [] };

const facilitator = new x402Facilitator()
  .onBeforeSettle(async () => {
    if (revertNext) await chain.pause(true);
  })
  .onAfterSettle(async ({ result }) => {
    if (revertNext) {
      revertNext = false;
      await chain.pause(false);
    }
    if (result.success) {
      stats.settled++;
      stats.transactions.push(result.transaction);
    } else {
      stats.failed++;
    }
  });
registerExactEvmScheme(facilitator, { signer, networks: [`eip155:${chainId}`] });

const json = (res, status, body) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body, (_, v) => (typeof v === "bigint" ? v.toString() : v)));
};

const readBody = async (req) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
};

const server = createServer(async (req, res) => {
  const url = new URL(req.url, "http://localhost");
  try {
    if (req.method === "POST" && (url.pathname === "/verify" || url.pathname === "/settle")) {
      const { paymentPayload, paymentRequirements } = await readBody(req);
      const result =
        url.pathname === "/verify"
          ? await facilitator.verify(paymentPayload, paymentRequirements)
          : await facilitator.settle(paymentPayload, paymentRequirements);
      return json(res, 200, result);
    }
    if (req.method === "GET" && url.pathname === "/supported") return json(res, 200, facilitator.getSupported());
    if (req.method === "GET" && url.pathname === "/test/balance")
      return json(res, 200, { balance: await chain.balanceOf(url.searchParams.get("address")) });
    if (req.method === "GET" && url.pathname === "/test/settlements") return json(res, 200, stats);
    if (req.method === "POST" && url.pathname === "/test/revert-next-settle") {
      revertNext = true;
      return json(res, 200, { armed: true });
    }
    json(res, 404, { error: "not found" });
  } catch (err) {
    json(res, 500, { error: err instanceof Error ? err.message : String(err) });
  }
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  process.stdout.write(
    `${JSON.stringify({
      url: `http://127.0.0.1:${port}`,
      chainId,
      token: chain.token,
      tokenName,
      tokenVersion,
      payer: chain.payer,
      payerKey: keys.payer,
      payTo: chain.payTo,
    })}\n`,
  );
});

process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
