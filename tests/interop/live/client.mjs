// Drives one subscription with a reference GraphQL streaming client, for the
// Go tests in tests/stream_interop_test.go.
//
//   node client.mjs <ws|sse> <http base URL> <key> <query> <variables JSON> [header|init|none]
//
// ws uses graphql-ws (subprotocol graphql-transport-ws) over the ws package;
// the key goes in the Authorization header of the upgrade ("header") or in
// the connection_init payload ("init", the default). sse uses graphql-sse
// (distinct connections mode) with the Authorization header. "none" sends no
// key.
//
// Every event of the subscription is printed on stdout as one JSON line:
//   {"type":"next","payload":{...}}      a result (data, errors, extensions)
//   {"type":"error","errors":[...]}      the protocol's error message
//   {"type":"error","close":{code,reason}} / {"type":"error","message":...}
//   {"type":"complete"}
//   {"type":"connected"}                 graphql-ws acknowledged the connection
// The process exits when the subscription ends, or when a line "stop" (or
// end of input) arrives on stdin, after disposing of the client.
import WebSocket from 'ws';
import { createClient as createWSClient } from 'graphql-ws';
import { createClient as createSSEClient } from 'graphql-sse';
import readline from 'node:readline';

const [transport, base, key, query, variablesJSON, authMode = 'init'] = process.argv.slice(2);
const variables = JSON.parse(variablesJSON || '{}');
const auth = key && authMode !== 'none' ? `Bearer ${key}` : undefined;

function print(obj) {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

let client;
let finished = false;
function finish(code = 0) {
  if (finished) return;
  finished = true;
  Promise.resolve(client && client.dispose && client.dispose())
    .catch(() => {})
    .finally(() => process.exit(code));
}

function describeError(err) {
  if (Array.isArray(err)) return { type: 'error', errors: err };
  if (err && typeof err === 'object' && 'code' in err && 'reason' in err) {
    return { type: 'error', close: { code: err.code, reason: err.reason } };
  }
  return { type: 'error', message: String(err && err.message ? err.message : err) };
}

const sink = {
  next: (payload) => print({ type: 'next', payload }),
  error: (err) => {
    print(describeError(err));
    finish(0);
  },
  complete: () => {
    print({ type: 'complete' });
    finish(0);
  },
};

if (transport === 'ws') {
  const url = base.replace(/^http/, 'ws') + '/graphql';
  const headers = authMode === 'header' && auth ? { Authorization: auth } : undefined;
  class HeaderWebSocket extends WebSocket {
    constructor(address, protocols) {
      super(address, protocols, headers ? { headers } : {});
    }
  }
  client = createWSClient({
    url,
    webSocketImpl: HeaderWebSocket,
    connectionParams: authMode === 'init' && auth ? { Authorization: auth } : undefined,
    retryAttempts: 0,
    lazy: true,
    on: {
      connected: () => print({ type: 'connected' }),
      closed: (event) => print({ type: 'closed', code: event.code, reason: event.reason }),
    },
  });
} else if (transport === 'sse') {
  client = createSSEClient({
    url: base + '/graphql',
    headers: auth ? { Authorization: auth } : {},
    retryAttempts: 0,
  });
} else {
  console.error(`unknown transport ${transport}`);
  process.exit(2);
}

client.subscribe({ query, variables }, sink);

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  if (line.trim() === 'stop') finish(0);
});
rl.on('close', () => finish(0));
