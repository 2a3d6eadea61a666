// Connects to the service's /mcp with the official MCP TypeScript SDK's
// OAuth client, knowing only the URL, as claude.ai or any URL-only client
// does: discovery (the 401 challenge, RFC 9728 and RFC 8414 metadata),
// registration (dynamic, or with a Client ID Metadata Document when
// clientMetadataUrl is given), authorization with PKCE through the
// consent page, token exchange, tool calls, refresh, and refusal once the
// key behind the grant is revoked.
//
//   node oauth.mjs '{"url", "callbackPort", "clientMetadataUrl"?, "tool", "args"}'
//
// It reports each step as one JSON line on stdout:
//   {"event":"authorize","url"}   open this URL in a browser and approve;
//                                 the redirect lands on the loopback
//                                 callback (callbackPort) this script serves
//   {"event":"connected","clientId","tools","call"}
//                                 then it reads one line on stdin (the
//                                 caller has read the account's usage)
//   {"event":"refreshed","call","rotated"}  after its access token was
//                                 made invalid, the SDK refreshed it
//   {"event":"waiting"}           then it reads one line on stdin (the key
//                                 was revoked) and calls again:
//   {"event":"refused","error"}   or {"event":"fatal","error"}
import http from "node:http";
import readline from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const opts = JSON.parse(process.argv[2]);
const emit = (ev) => process.stdout.write(JSON.stringify(ev) + "\n");
const redirectUrl = `http://127.0.0.1:${opts.callbackPort}/callback`;

// The loopback callback: each redirect resolves the next code.
let codeWaiter = null;
const callback = http.createServer((req, res) => {
  const u = new URL(req.url, redirectUrl);
  res.writeHead(200, { "Content-Type": "text/html" });
  res.end("<!doctype html><title>Connected</title><p id=done>You can close this window.</p>");
  if (u.pathname === "/callback" && codeWaiter) {
    const w = codeWaiter;
    codeWaiter = null;
    w({ code: u.searchParams.get("code"), state: u.searchParams.get("state"), error: u.searchParams.get("error") });
  }
});
await new Promise((resolve) => callback.listen(opts.callbackPort, "127.0.0.1", resolve));
const nextCode = () => new Promise((resolve) => (codeWaiter = resolve));

// An in-memory OAuthClientProvider.
const store = {};
let lastState;
const provider = {
  get redirectUrl() {
    return redirectUrl;
  },
  clientMetadataUrl: opts.clientMetadataUrl,
  get clientMetadata() {
    return {
      client_name: "cryptointel interop",
      redirect_uris: [redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  },
  state() {
    lastState = Math.random().toString(36).slice(2);
    return lastState;
  },
  clientInformation: () => store.client,
  saveClientInformation: (c) => void (store.client = c),
  tokens: () => store.tokens,
  saveTokens: (t) => void (store.tokens = t),
  redirectToAuthorization: (url) => emit({ event: "authorize", url: url.toString() }),
  saveCodeVerifier: (v) => void (store.verifier = v),
  codeVerifier: () => store.verifier,
  invalidateCredentials(scope) {
    if (scope === "all" || scope === "client") delete store.client;
    if (scope === "all" || scope === "tokens") delete store.tokens;
    if (scope === "all" || scope === "verifier") delete store.verifier;
  },
};

// Lines on stdin, one at a time: the caller's go-ahead between steps.
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const nextLine = async () => {
  const { done } = await lines.next();
  if (done) throw new Error("stdin closed before the next step");
};

const url = new URL(opts.url);
const newTransport = () => new StreamableHTTPClientTransport(url, { authProvider: provider });

async function main() {
  let client = new Client({ name: "cryptointel-oauth-interop", version: "1.0.0" });
  let transport = newTransport();
  const waiting = nextCode();
  try {
    await client.connect(transport);
    throw new Error("connected without authorization");
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
  }
  const { code, state, error } = await waiting;
  if (error) throw new Error(`authorization refused: ${error}`);
  if (state !== lastState) throw new Error(`state did not pass through: ${state} != ${lastState}`);
  await transport.finishAuth(code);
  client = new Client({ name: "cryptointel-oauth-interop", version: "1.0.0" });
  transport = newTransport();
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((t) => t.name);
  const call = await client.callTool({ name: opts.tool, arguments: opts.args ?? {} });
  emit({ event: "connected", clientId: store.client.client_id, tools, call });
  await nextLine();

  // Refresh: the access token no longer works; the SDK's 401 handling
  // refreshes it (the refresh token rotates) and retries the call.
  const before = store.tokens.refresh_token;
  store.tokens = { ...store.tokens, access_token: "cit_expired-or-revoked" };
  const again = await client.callTool({ name: opts.tool, arguments: opts.args ?? {} });
  emit({ event: "refreshed", call: again, rotated: store.tokens.refresh_token !== before && !!store.tokens.refresh_token });

  emit({ event: "waiting" });
  await nextLine();
  try {
    const res = await client.callTool({ name: opts.tool, arguments: opts.args ?? {} });
    emit({ event: "fatal", error: `called after the key was revoked: ${JSON.stringify(res).slice(0, 300)}` });
  } catch (err) {
    emit({ event: "refused", error: String(err?.message ?? err), unauthorized: err instanceof UnauthorizedError });
  }
}

try {
  await main();
} catch (err) {
  emit({ event: "fatal", error: String(err?.stack ?? err) });
}
callback.close();
process.exit(0);
