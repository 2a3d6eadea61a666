// The cryptointel GraphQL playground: GraphiQL with an API-key field. The key
// is kept in localStorage and sent as `Authorization: Bearer <key>` to
// /graphql on the same origin; an Authorization header typed into the
// headers editor takes precedence. Everything here is bundled at build time:
// the page loads nothing from the internet.
import 'graphiql/setup-workers/vite';
import 'graphiql/style.css';
import './playground.css';

import { StrictMode, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';

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
{
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
function makeFetcher(keyRef) {
  return async (params, opts) => {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json' };
    const editorHeaders = (opts && opts.headers) || {};
    const key = keyRef.current.trim();
    if (key && !hasAuthorization(editorHeaders)) {
      headers.Authorization = `Bearer ${key}`;
    }
    Object.assign(headers, editorHeaders);
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
        <GraphiQL fetcher={fetcher} defaultQuery={EXAMPLE_QUERY} defaultEditorToolsVisibility={false}>
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
