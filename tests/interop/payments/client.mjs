// Pays for requests with the protocols' own client SDKs, as an integrator
// would, and reports what happened.
//
//   node client.mjs '<json>'     one payment
//   node client.mjs              one payment per JSON line on standard input,
//                                one result line each (the SDKs load once)
//
// with {"client": "x402-fetch" | "x402-v2" | "mppx", "url", "method",
// "body", "payerKey", "chainId", "token", "tokenName", "tokenVersion",
// "tamper", "dryRun"}. tamper "underpay" lowers the price the SDK sees in
// the 402 before it signs (the SDK then signs, correctly, for too little).
// dryRun keeps the paid request from being sent (it is answered 418
// locally), so the caller holds an unused credential. A result is
// {"status", "headers", "body", "sent": [{"url", "headers"}...]}, where sent
// lists every request the SDK made with the headers it set, so the caller
// can replay or alter a real credential. An SDK that throws gives
// {"error": message}.
import { createInterface } from "node:readline";

// The SDKs load lazily, once: each pulls a large module graph.
const sdk = {
  "x402-fetch": () => import("x402-fetch"),
  "x402-v2": async () => ({ fetch: await import("@x402/fetch"), evm: await import("@x402/evm/exact/client") }),
  mppx: () => import("mppx/client"),
  accounts: () => import("viem/accounts"),
};
const loaded = new Map();
const load = (name) => {
  if (!loaded.has(name)) loaded.set(name, sdk[name]());
  return loaded.get(name);
};

const halve = (s) => String(BigInt(s) / 2n);
const b64json = (s, url) => JSON.parse(Buffer.from(s, url ? "base64url" : "base64").toString("utf8"));

// underpay halves every price of a 402: the x402 v1 body, the v2
// PAYMENT-REQUIRED header and the MPP challenge's request.
async function underpay(response) {
  const headers = new Headers(response.headers);
  const body = await response.json();
  for (const a of body.accepts ?? []) a.maxAmountRequired = halve(a.maxAmountRequired);
  const required = headers.get("payment-required");
  if (required) {
    const v2 = b64json(required);
    for (const a of v2.accepts) a.amount = halve(a.amount);
    headers.set("payment-required", Buffer.from(JSON.stringify(v2)).toString("base64"));
  }
  const www = headers.get("www-authenticate");
  if (www) {
    headers.set(
      "www-authenticate",
      www.replace(/request="([^"]+)"/, (_, req) => {
        const r = b64json(req, true);
        r.amount = halve(r.amount);
        return `request="${Buffer.from(JSON.stringify(r)).toString("base64url")}"`;
      }),
    );
  }
  return new Response(JSON.stringify(body), { status: 402, headers });
}

// payingFetch is the SDK's paying fetch over base, the way its README
// sets it up.
async function payingFetch(opts, base) {
  const { privateKeyToAccount } = await load("accounts");
  const account = privateKeyToAccount(opts.payerKey);
  switch (opts.client) {
    case "x402-fetch": {
      // x402 v1: the network comes from the signer's chain (84532 = base-sepolia).
      const { createSigner, wrapFetchWithPayment } = await load("x402-fetch");
      return wrapFetchWithPayment(base, await createSigner("base-sepolia", opts.payerKey), 1_000_000n);
    }
    case "x402-v2": {
      const { fetch: x402, evm } = await load("x402-v2");
      const client = new x402.x402Client();
      evm.registerExactEvmScheme(client, { signer: account });
      // The client pays only known tokens (USDC...) unless told otherwise;
      // the local chain's token is not one.
      client.setSpendControls({
        allowedAssets: [{ network: `eip155:${opts.chainId}`, asset: opts.token, maxAmountPerPayment: "1000000" }],
      });
      return x402.wrapFetchWithPayment(base, client);
    }
    case "mppx": {
      const { Mppx, evm } = await load("mppx");
      const mppx = Mppx.create({
        polyfill: false,
        fetch: base,
        maxPaymentRetries: 1,
        methods: [evm({ account, authorization: { name: opts.tokenName, version: opts.tokenVersion } })],
      });
      return mppx.fetch;
    }
    default:
      throw new Error(`unknown client ${opts.client}`);
  }
}

// run makes one paid request as opts says and returns the result object.
async function run(opts) {
  const sent = [];
  // The fetch the SDK is given: it records each request's headers, holds
  // back a paid request on dryRun, and halves the prices on tamper
  // "underpay".
  const recordingFetch = async (input, init) => {
    const request = new Request(input, init);
    const headers = Object.fromEntries(request.headers);
    sent.push({ url: request.url, headers });
    const paying = headers["x-payment"] || headers["payment-signature"] || /^payment /i.test(headers.authorization ?? "");
    if (opts.dryRun && paying) return new Response("{}", { status: 418 });
    const response = await fetch(request);
    if (response.status !== 402 || opts.tamper !== "underpay") return response;
    return underpay(response);
  };
  try {
    const pay = await payingFetch(opts, recordingFetch);
    const init = { method: opts.method ?? "GET" };
    if (opts.body !== undefined) {
      init.body = opts.body;
      init.headers = { "content-type": "application/json" };
    }
    const response = await pay(opts.url, init);
    const body = await response.text();
    return { status: response.status, headers: Object.fromEntries(response.headers), body, sent };
  } catch (err) {
    return { error: err instanceof Error ? err.stack : String(err), sent };
  }
}

const reply = (result) => process.stdout.write(`${JSON.stringify(result)}\n`);

if (process.argv[2]) {
  reply(await run(JSON.parse(process.argv[2])));
} else {
  // One line at a time, in order.
  for await (const line of createInterface({ input: process.stdin })) {
    if (line.trim()) reply(await run(JSON.parse(line)));
  }
}
