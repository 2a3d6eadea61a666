// Drives the service's /mcp with the official MCP TypeScript SDK, as an
// integrator's agent would, and reports what happened as one JSON line.
//
//   node client.mjs '<json>'
//
// {"mode": "session", "url", "key", "calls": [{"tool", "args"}],
//  "resources": [uri], "prompts": [{"name", "args"}]}
//   connects over Streamable HTTP with the key as a Bearer key, lists the
//   tools, resource templates and prompts, then makes each call with the
//   SDK's callTool (which validates structured content against the tool's
//   outputSchema), reads each resource and gets each prompt.
//
// {"mode": "pay", "url", "payerKey", "chainId", "token", "calls": [{"tool", "args", "replay"}]}
//   connects without a key and lists the tools (so the SDK validates each
//   result against its tool's outputSchema, payment requests included);
//   each call is made unpaid, and its payment request (x402's MCP transport
//   v2: a tool result with isError whose structuredContent is the
//   PaymentRequired) answered by @x402/core's client with @x402/evm's exact
//   scheme signing the payment, and made again with the payment in
//   params._meta["x402/payment"]; "replay" sends the previous call's
//   payment again instead of paying.
//
// A result lists, per call, {"ok": result} or {"error": {"code", "message",
// "data"}}; an SDK that throws otherwise gives {"fatal": message}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const opts = JSON.parse(process.argv[2]);

const errorOf = (err) =>
  err instanceof McpError ? { code: err.code, message: err.message, data: err.data } : { code: null, message: String(err?.message ?? err) };

async function connect(key) {
  const headers = key ? { Authorization: `Bearer ${key}` } : {};
  const client = new Client({ name: "cryptointel-interop", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(opts.url), { requestInit: { headers } });
  await client.connect(transport);
  return client;
}

async function session() {
  const client = await connect(opts.key);
  const out = {
    serverVersion: client.getServerVersion(),
    instructions: client.getInstructions(),
    tools: (await client.listTools()).tools,
    templates: (await client.listResourceTemplates()).resourceTemplates,
    prompts: (await client.listPrompts()).prompts,
    calls: [],
    resources: [],
    gotPrompts: [],
  };
  for (const c of opts.calls ?? []) {
    try {
      out.calls.push({ ok: await client.callTool({ name: c.tool, arguments: c.args ?? {} }) });
    } catch (err) {
      out.calls.push({ error: errorOf(err) });
    }
  }
  for (const uri of opts.resources ?? []) {
    try {
      out.resources.push({ ok: await client.readResource({ uri }) });
    } catch (err) {
      out.resources.push({ error: errorOf(err) });
    }
  }
  for (const p of opts.prompts ?? []) {
    try {
      out.gotPrompts.push({ ok: await client.getPrompt({ name: p.name, arguments: p.args ?? {} }) });
    } catch (err) {
      out.gotPrompts.push({ error: errorOf(err) });
    }
  }
  await client.close();
  return out;
}

async function pay() {
  const { x402Client } = await import("@x402/core/client");
  const { registerExactEvmScheme } = await import("@x402/evm/exact/client");
  const { privateKeyToAccount } = await import("viem/accounts");
  const x402 = new x402Client();
  registerExactEvmScheme(x402, { signer: privateKeyToAccount(opts.payerKey) });
  // The client pays only known tokens unless told otherwise; the local
  // chain's token is not one.
  x402.setSpendControls({
    allowedAssets: [{ network: `eip155:${opts.chainId}`, asset: opts.token, maxAmountPerPayment: "1000000" }],
  });
  const client = await connect("");
  const out = { calls: [], tools: (await client.listTools()).tools.length };
  let last;
  // The transport's client rule: structuredContent if it holds x402Version
  // and accepts, else content[0].text parsed.
  const paymentRequiredOf = (result) => {
    if (!result?.isError) return null;
    const pr = result.structuredContent ?? JSON.parse(result.content?.[0]?.text ?? "null");
    return pr && pr.x402Version !== undefined && Array.isArray(pr.accepts) ? pr : null;
  };
  for (const c of opts.calls) {
    const params = { name: c.tool, arguments: c.args ?? {} };
    const record = {};
    try {
      if (c.replay) {
        record.paid = await client.callTool({ ...params, _meta: { "x402/payment": last } });
      } else {
        record.unpaid = await client.callTool(params);
        const required = paymentRequiredOf(record.unpaid);
        if (required) {
          record.required = required;
          last = await x402.createPaymentPayload(required);
          record.payment = last;
          record.paid = await client.callTool({ ...params, _meta: { "x402/payment": last } });
        }
      }
    } catch (err) {
      record.error = errorOf(err);
    }
    out.calls.push(record);
  }
  await client.close();
  return out;
}

// The result is written whole before the process exits: on a pipe a large
// write may still be pending when it returns.
const done = (result) => process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
try {
  done(opts.mode === "pay" ? await pay() : await session());
} catch (err) {
  done({ fatal: err instanceof Error ? err.stack : String(err) });
}
