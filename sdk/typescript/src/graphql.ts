// GraphQL over /graphql: query() for typed documents (GraphQL Code
// Generator's TypedDocumentString, see graphql/*.graphql), subscribe() for
// subscriptions over graphql-sse that resume from the last cursor after a
// dropped connection.

import { GraphQLError, StreamClosedError } from "./errors.js";
import { readSSE } from "./sse.js";
import { callRequest } from "./transport.js";
import { dropOf, reconnectWait, resumableCodes, type ResumeOptions } from "./stream.js";
import type { Client } from "./client.js";

/** A document typed with its result and variables (a generated
 * TypedDocumentString, or a plain string typed by hand). */
export type Document<TResult, TVariables> =
  | (string & { __apiType?: (variables: TVariables) => TResult })
  | { toString(): string; __apiType?: (variables: TVariables) => TResult };

type ResultOf<D> = D extends { __apiType?: (v: any) => infer R } ? R : unknown;
type VariablesOf<D> = D extends { __apiType?: (v: infer V) => any } ? V : Record<string, unknown>;

export interface GraphQLResult<T> {
  data: T;
  extensions?: Record<string, unknown>;
}

export interface SubscriptionMessage<T> {
  data: T;
  /** The cursor of this result (extensions.cursor): resume after it. */
  cursor: string;
  extensions?: Record<string, unknown>;
}

interface Payload {
  data?: unknown;
  errors?: GraphQLError["errors"];
  extensions?: Record<string, unknown>;
}

export class GraphQL {
  constructor(private readonly client: Client) {}

  /** query runs a query (or mutation) and returns its `data`; errors throw
   * a GraphQLError carrying extensions.code. */
  async query<D extends Document<any, any>>(document: D, variables?: VariablesOf<D>, signal?: AbortSignal): Promise<ResultOf<D>> {
    return (await this.execute(document, variables, signal)).data;
  }

  /** execute is query returning extensions (cost) too. */
  async execute<D extends Document<any, any>>(document: D, variables?: VariablesOf<D>, signal?: AbortSignal): Promise<GraphQLResult<ResultOf<D>>> {
    const c = this.client;
    const request = callRequest(c.baseUrl + "/graphql", {
      method: "POST",
      headers: { ...this.headers(), "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query: String(document), variables: variables ?? {} }),
    }, c.options.timeoutMs ?? 30_000, signal);
    const response = await c.fetch(request);
    c.lastResponse = response;
    const text = await response.text();
    let payload: Payload | undefined;
    try {
      payload = JSON.parse(text);
    } catch {
      payload = undefined;
    }
    if (payload?.errors?.length) throw new GraphQLError(payload.errors, response.headers.get("x-request-id") ?? undefined);
    if (!response.ok || !payload) throw await c.errorOf(new Response(text, { status: response.status, headers: response.headers }));
    return { data: payload.data as ResultOf<D>, extensions: payload.extensions };
  }

  /** subscribe follows a subscription (`for await`). The document must
   * declare `$after: String` and pass it to the field: it is set to the
   * last cursor on every reconnection (and, when not given, to the
   * cursor of "now" before the first connection, so nothing is lost). */
  async *subscribe<D extends Document<any, any>>(
    document: D,
    variables?: VariablesOf<D>,
    o: ResumeOptions = {},
  ): AsyncGenerator<SubscriptionMessage<ResultOf<D>>, void, undefined> {
    const vars: Record<string, unknown> = { ...(variables as Record<string, unknown>) };
    if (!vars.after) {
      const now = await this.query("{ streamCursor }" as Document<{ streamCursor: string }, {}>, {}, o.signal);
      vars.after = now.streamCursor;
    }
    let failures = 0;
    const abort = new AbortController();
    const signal = o.signal ? AbortSignal.any([o.signal, abort.signal]) : abort.signal;
    try {
      for (;;) {
        let dropped: unknown;
        try {
          const response = await this.client.open("/graphql", {
            method: "POST",
            headers: { "content-type": "application/json", accept: "text/event-stream" },
            body: JSON.stringify({ query: String(document), variables: vars }),
            signal,
          });
          if (!response.ok) throw await this.client.errorOf(response);
          let completed = false;
          for await (const m of readSSE(response.body!)) {
            if (m.event === "complete") {
              completed = true;
              break;
            }
            if (m.event !== "next") continue;
            const p = JSON.parse(m.data) as Payload;
            const cursor = p.extensions?.cursor as string | undefined;
            if (p.errors?.length) {
              const ext = p.errors[0].extensions ?? {};
              const code = String(ext.code ?? "");
              if (typeof ext.cursor === "string") vars.after = ext.cursor;
              if (!resumableCodes.has(code)) {
                if (typeof ext.cursor === "string") throw new StreamClosedError(p.errors[0].message, code, ext.cursor);
                throw new GraphQLError(p.errors, response.headers.get("x-request-id") ?? undefined);
              }
              dropped = new StreamClosedError(p.errors[0].message, code, vars.after as string);
              break;
            }
            if (cursor) vars.after = cursor;
            failures = 0;
            yield { data: p.data as ResultOf<D>, cursor: cursor ?? String(vars.after), extensions: p.extensions };
          }
          if (completed && !dropped) return;
        } catch (err) {
          if (signal.aborted) return;
          dropped = dropOf(err);
        }
        if (signal.aborted) return;
        failures++;
        await reconnectWait("subscription", failures, o, vars.after as string, dropped, signal);
      }
    } finally {
      abort.abort();
    }
  }

  private headers(): Record<string, string> {
    const h: Record<string, string> = { ...this.client.options.headers };
    if (this.client.options.apiKey) h.authorization = `Bearer ${this.client.options.apiKey}`;
    return h;
  }
}
