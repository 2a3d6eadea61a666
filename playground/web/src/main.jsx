// The cryptointel GraphQL playground: GraphiQL with an API-key field. The key
// is kept in localStorage and sent as `Authorization: Bearer <key>` to
// /graphql on the same origin; an Authorization header typed into the
// headers editor takes precedence. Subscriptions run over graphql-sse (the
// same endpoint, Accept: text/event-stream), each pushed event appearing in
// the result pane as it arrives. Everything here is bundled at build time:
// the page loads nothing from the internet.
import 'graphiql/setup-workers/vite';
import 'graphiql/style.css';
import './playground.css';

import { StrictMode, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import { getOperationAST, parse } from 'graphql';
import { createClient } from 'graphql-sse';

/** localStorage key under which the API key is remembered. */
const KEY_STORAGE = 'cryptointel.apiKey';

/** The GraphQL endpoint, on the page's own origin. */
const ENDPOINT = new URL('/graphql', window.location.origin).toString();

/** The query the playground opens with: a multi-hop walk through the graph. */
export const EXAMPLE_QUERY = `# cryptointel GraphQL playground
#
# 1. Paste your API key in the field above.
# 2. Press run (or Ctrl-Enter).
# Browse the schema in the docs (left).
#
# This query resolves a name to an entity,
# follows its relationships, and lists the
# latest events of each related entity.
query EntityWalk {
  resolveEntities(name: "Ethereum", first: 1) {
    entity {
      id
      displayName
      relationships(first: 5) {
        relationshipType
        relatedEntity {
          displayName
          events(first: 3) {
            nodes {
              title
              owners {
                label
              }
            }
          }
        }
      }
    }
  }
}
`;

/** The second tab: live events, pushed as they are ingested. */
export const SUBSCRIPTION_EXAMPLE = `# Live events, pushed as they are ingested.
#
# Run it, then watch the result pane: each new
# signal event appears as it arrives. Every result
# carries extensions.cursor: pass it as \`after\`
# to resume without missing anything.
subscription LiveSignals {
  events(surface: SIGNAL) {
    id
    title
    eventCategory
    significance
    latestEvidenceTimestamp
    owners {
      id
      label
    }
  }
}
`;

/**
 * urlTabs reads ?query= (and ?variables=) so a link can open the playground
 * on an operation, e.g. /playground?query=subscription%20%7B…%7D.
 */
function urlTabs() {
  const params = new URLSearchParams(window.location.search);
  const query = params.get('query');
  if (!query) return null;
  return { query, variables: params.get('variables') || undefined };
}

function readStoredKey() {
  try {
    return window.localStorage.getItem(KEY_STORAGE) || '';
  } catch {
    return '';
  }
}

function storeKey(key) {
  try {
    if (key) {
      window.localStorage.setItem(KEY_STORAGE, key);
    } else {
      window.localStorage.removeItem(KEY_STORAGE);
    }
  } catch {
    // Storage may be disabled; the key then lives only in this page.
  }
}

function hasAuthorization(headers) {
  return Object.keys(headers || {}).some((name) => name.toLowerCase() === 'authorization');
}

/**
 * makeFetcher returns a GraphiQL fetcher that posts to ENDPOINT. It reads the
 * key from keyRef at call time, so a query run right after typing a key uses
 * it. Its identity changes with `version`, which makes GraphiQL introspect
 * the schema again under the new key.
 */
/** isSubscription reports whether params run a subscription operation. */
function isSubscription(params) {
  try {
    const op = getOperationAST(parse(params.query), params.operationName || undefined);
    return !!op && op.operation === 'subscription';
  } catch {
    return false; // let the server report the syntax error
  }
}

/**
 * subscribe runs a subscription over graphql-sse and returns the async
 * iterable of its results, which GraphiQL shows one by one. Each result
 * carries extensions.cursor, the position to resume from (`after`).
 */
function subscribe(params, headers) {
  const client = createClient({ url: ENDPOINT, headers, retryAttempts: 0 });
  const results = client.iterate({
    query: params.query,
    variables: params.variables || {},
    operationName: params.operationName || undefined,
  });
  return {
    [Symbol.asyncIterator]() {
      return {
        next: () => results.next(),
        return: async () => {
          await results.return?.();
          client.dispose();
          return { done: true, value: undefined };
        },
      };
    },
  };
}

function makeFetcher(keyRef) {
  return async (params, opts) => {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json' };
    const editorHeaders = (opts && opts.headers) || {};
    const key = keyRef.current.trim();
    if (key && !hasAuthorization(editorHeaders)) {
      headers.Authorization = `Bearer ${key}`;
    }
    Object.assign(headers, editorHeaders);
    if (isSubscription(params)) {
      const streamHeaders = { ...headers };
      delete streamHeaders['Content-Type'];
      delete streamHeaders.Accept;
      return subscribe(params, streamHeaders);
    }
    const response = await fetch(ENDPOINT, {
      method: 'POST',
      headers,
      body: JSON.stringify(params),
      credentials: 'same-origin',
    });
    const text = await response.text();
    try {
      return JSON.parse(text);
    } catch {
      return { errors: [{ message: `HTTP ${response.status}: ${text}` }] };
    }
  };
}

function Playground() {
  const [key, setKey] = useState(readStoredKey);
  const [appliedKey, setAppliedKey] = useState(key);
  const keyRef = useRef(key);

  // Re-introspect once typing pauses, not on every keystroke.
  useEffect(() => {
    if (key === appliedKey) return undefined;
    const timer = window.setTimeout(() => setAppliedKey(key), 500);
    return () => window.clearTimeout(timer);
  }, [key, appliedKey]);

  const onKeyChange = useCallback((event) => {
    const value = event.target.value;
    keyRef.current = value;
    storeKey(value.trim());
    setKey(value);
  }, []);

  // eslint-disable-next-line react-hooks/exhaustive-deps
  const fetcher = useMemo(() => makeFetcher(keyRef), [appliedKey]);
  const fromURL = useMemo(urlTabs, []);

  return (
    <div className="playground">
      <header className="playground-bar">
        <span className="playground-title">cryptointel</span>
        <label className="playground-key" htmlFor="api-key">
          API key
          <input
            id="api-key"
            name="api-key"
            type="password"
            autoComplete="off"
            spellCheck={false}
            placeholder="paste your key; sent as Authorization: Bearer …"
            value={key}
            onChange={onKeyChange}
          />
        </label>
        <span className="playground-hint">
          Endpoint <code>{ENDPOINT}</code>
        </span>
      </header>
      <main className="playground-main">
        <GraphiQL
          fetcher={fetcher}
          defaultQuery={EXAMPLE_QUERY}
          defaultTabs={fromURL ? [fromURL] : [{ query: EXAMPLE_QUERY }, { query: SUBSCRIPTION_EXAMPLE }]}
          initialQuery={fromURL ? fromURL.query : undefined}
          initialVariables={fromURL ? fromURL.variables : undefined}
          defaultEditorToolsVisibility={false}
        >
          <GraphiQL.Logo>cryptointel</GraphiQL.Logo>
        </GraphiQL>
      </main>
    </div>
  );
}

createRoot(document.getElementById('root')).render(
  <StrictMode>
    <Playground />
  </StrictMode>,
);
