// The client: one typed method per /v1 route over openapi-fetch, with
// retries, timeouts, typed errors, the rate window after each call, cursor
// walks, streams, GraphQL and pay-per-request.

import createClient, { type Client as OpenAPIClient } from "openapi-fetch";
import type { paths } from "./generated/openapi.js";
import { ConnectionError, TimeoutError, errorFor, type ErrorBody } from "./errors.js";
import { rateFrom, type RateInfo } from "./rate.js";
import { cursorRoutes, legacyRoutes, routes } from "./routes.js";
import { retryingFetch, retryingSend, readWithin, type FetchLike, type RetryOptions } from "./transport.js";
import { GraphQL } from "./graphql.js";
import { streamEvents, type StreamOptions, type StreamMessage } from "./stream.js";
import { payingFetch, type PaymentOptions } from "./payment.js";

type Routes = typeof routes;
export type RouteName = keyof Routes;
type Op<K extends RouteName> = paths[Routes[K][1]][Routes[K][0]];

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type ParamsIn<O, Where extends string> = O extends { parameters: infer P }
  ? P extends Record<Where, infer Q> ? (Q extends undefined | never ? {} : NonNullable<Q>) : {}
  : {};
type BodyOf<O> = O extends { requestBody: { content: { "application/json": infer B } } }
  ? { body: B }
  : O extends { requestBody?: { content: { "application/json": infer B } } }
    ? { body?: B }
    : { body?: Record<string, unknown> };

/** The parameters of a route's method: its path and query parameters in
 * one object (and `body` for the routes that take one). */
export type Params<K extends RouteName> = Simplify<ParamsIn<Op<K>, "path"> & ParamsIn<Op<K>, "query"> & BodyOf<Op<K>>>;
type Success<O> = O extends { responses: infer R }
  ? R extends { 200: { content: { "application/json": infer T } } } ? T
  : R extends { 201: { content: { "application/json": infer T } } } ? T
  : R extends { 202: { content: { "application/json": infer T } } } ? T
  : unknown
  : unknown;
/** The decoded JSON of a route's success answer. */
export type Result<K extends RouteName> = Success<Op<K>>;
export type CursorRoute = (typeof cursorRoutes)[number];
/** One item of a cursor route's `data`. */
export type Item<K extends CursorRoute> = Result<K> extends { data: Array<infer T> } ? T : never;

type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];
type ParamArg<K extends RouteName> = RequiredKeys<Params<K>> extends never ? [params?: Params<K>, options?: CallOptions] : [params: Params<K>, options?: CallOptions];

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

export type Methods = { [K in RouteName]: (...args: ParamArg<K>) => Promise<Result<K>> };

export interface ClientOptions {
  /** The service's base URL, e.g. http://localhost:8080. */
  baseUrl: string;
  /** The API key (sent as Authorization: Bearer). Optional with `payment`. */
  apiKey?: string;
  /** true: events carry their legacy aliases too (the contract's full
   * shape). Default false: the lean shape (canonical fields only). A
   * call's own `legacy` parameter wins. */
  legacy?: boolean;
  /** Retries on 429, 503 and connection errors. */
  retry?: RetryOptions;
  /** Timeout of one attempt in ms (default 30000; 0: none): past it the
   * call throws TimeoutError (its body read counts), and the request is
   * left to finish with its body discarded (a `signal` of the call's
   * aborts it). Streams time out only while connecting. */
  timeoutMs?: number;
  /** The fetch the client sends with (default globalThis.fetch). */
  fetch?: (input: Request) => Promise<Response>;
  /** Pay-per-request: a 402 becomes a paid retry through @x402/fetch. */
  payment?: PaymentOptions;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}

const pathParam = /\{(\w+)\}/g;

/** notJSON makes a success body that is not JSON undefined. */
const notJSON = (err: unknown) => {
  if (err instanceof SyntaxError) return undefined;
  throw err;
};

/** pathParams is each route's set of path parameters, read once. */
const pathParams = new Map<string, Set<string>>();
const paramsOf = (path: string) => {
  let s = pathParams.get(path);
  if (!s) pathParams.set(path, (s = new Set(Array.from(path.matchAll(pathParam), (m) => m[1]))));
  return s;
};

/** queryString serializes query parameters the way the OpenAPI document
 * declares them (form style; arrays comma-separated, not exploded). */
function queryString(query: Record<string, unknown>): string {
  let out = "";
  for (const k in query) {
    const v = query[k];
    if (v === undefined || v === null) continue;
    const s = Array.isArray(v) ? v.map((x) => encodeURIComponent(String(x))).join(",") : encodeURIComponent(v instanceof Date ? v.toISOString() : String(v));
    out += (out ? "&" : "") + encodeURIComponent(k) + "=" + s;
  }
  return out;
}

export class Client {
  /** The openapi-fetch client underneath, for raw responses. */
  readonly raw: OpenAPIClient<paths>;
  /** The last answer's Response (its body consumed). */
  lastResponse: Response | undefined;
  private rateOf: Response | undefined;
  private rateInfo: RateInfo = {};

  /** The rate window and credits of the last answer, read from its
   * headers (when first asked for: calls do not pay for it). */
  get rate(): RateInfo {
    if (this.lastResponse !== this.rateOf) {
      this.rateOf = this.lastResponse;
      this.rateInfo = this.lastResponse ? rateFrom(this.lastResponse.headers) : {};
    }
    return this.rateInfo;
  }
  /** GraphQL: typed queries and resuming subscriptions. */
  readonly graphql: GraphQL;
  readonly baseUrl: string;
  readonly options: ClientOptions;
  /** The fetch every request goes through (retries, timeout, payment). */
  readonly fetch: FetchLike;
  private readonly streamFetch: FetchLike;
  private readonly send: ReturnType<typeof retryingSend>;
  private readonly defaultHeaders: Record<string, string>;
  private readonly timeoutMs: number;

  constructor(options: ClientOptions) {
    this.options = options;
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    const base: FetchLike = options.fetch ?? ((r) => globalThis.fetch(r));
    const paid = options.payment ? payingFetch(base, options.payment) : base;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.fetch = retryingFetch(paid, options.retry ?? {}, this.timeoutMs);
    // The methods' calls: straight to fetch(url, init) unless a fetch of
    // the caller's or the payment hook needs a Request.
    this.send = retryingSend(options.fetch || options.payment ? (url, init) => paid(new Request(url, init)) : (url, init) => globalThis.fetch(url, init), options.retry ?? {}, this.timeoutMs);
    this.streamFetch = retryingFetch(paid, options.retry ?? {}, 0);
    this.defaultHeaders = { ...options.headers };
    if (options.apiKey) this.defaultHeaders.authorization = `Bearer ${options.apiKey}`;
    this.raw = createClient<paths>({
      baseUrl: this.baseUrl,
      fetch: this.fetch,
      headers: this.defaultHeaders,
      querySerializer: { array: { style: "form", explode: false } },
    });
    this.graphql = new GraphQL(this);
    for (const name of Object.keys(routes) as RouteName[]) {
      (this as any)[name] = (params?: Record<string, unknown>, opts?: CallOptions) => this.call(name, params, opts);
    }
  }

  /** call sends route `name` with params (path, query and body in one
   * object) and returns its decoded JSON, or throws its typed error. */
  async call<K extends RouteName>(name: K, params?: Params<K> | Record<string, unknown>, opts?: CallOptions): Promise<Result<K>> {
    const [method, path] = routes[name];
    const pathValues: Record<string, unknown> = {};
    const query: Record<string, unknown> = {};
    let body: unknown;
    const inPath = paramsOf(path);
    for (const [k, v] of Object.entries(params ?? {})) {
      if (k === "body") body = v;
      else if (inPath.has(k)) pathValues[k] = v;
      else if (v !== undefined) query[k] = v;
    }
    if (legacyRoutes.has(name) && query.legacy === undefined) query.legacy = this.options.legacy ?? false;
    // The URL and request as openapi-fetch builds them (the same
    // serialization: path parameters encoded, arrays comma-joined), made
    // directly: this is every call's path, kept lean (bench/bench.mjs).
    let url = this.baseUrl + (inPath.size ? path.replace(pathParam, (_, k: string) => encodeURIComponent(String(pathValues[k]))) : path);
    const qs = queryString(query);
    if (qs) url += "?" + qs;
    const headers = body === undefined && !opts?.headers ? this.defaultHeaders
      : { ...this.defaultHeaders, ...(body === undefined ? {} : { "content-type": "application/json" }), ...opts?.headers };
    const m = method.toUpperCase();
    const answer = await this.send(m, url, { method: m, headers, body: body === undefined ? undefined : JSON.stringify(body) }, opts?.signal);
    const response = answer.response;
    this.lastResponse = response;
    let text = "";
    let data: unknown;
    try {
      // The attempt's timeout runs on while its body is read. A success
      // is decoded as fetch's json() does (a body that is not JSON gives
      // undefined); an error's text is kept for its typed error.
      const read: Promise<unknown> = response.status === 204 ? Promise.resolve(undefined) : response.ok ? response.json().catch(notJSON) : response.text();
      const v = await readWithin(answer, read);
      if (response.ok) data = v;
      else text = v as string;
    } catch (err) {
      if ((err as Error)?.name === "TimeoutError") throw new TimeoutError(`${m} ${url} timed out after ${this.timeoutMs} ms`, { cause: err });
      throw new ConnectionError(`${m} ${url}: ${(err as Error)?.message ?? err}`, { cause: err });
    }
    if (!response.ok) {
      try {
        data = text ? JSON.parse(text) : undefined;
      } catch {
        data = undefined;
      }
      const b = typeof data === "object" && data !== null ? (data as ErrorBody) : undefined;
      throw errorFor(response.status, b, response.headers, this.rate, text);
    }
    return data as Result<K>;
  }

  /** pages walks a cursor route page by page: it keeps the first page's
   * `since` (and every filter) and follows `next_cursor` until it is null. */
  async *pages<K extends CursorRoute>(name: K, params?: Params<K>, opts?: CallOptions): AsyncGenerator<Result<K>, void, undefined> {
    let p: Record<string, unknown> = { ...(params as Record<string, unknown>) };
    delete p.offset;
    for (;;) {
      const page = (await this.call(name, p as Params<K>, opts)) as Record<string, unknown>;
      yield page as Result<K>;
      const next = page.next_cursor;
      if (next === null || next === undefined || next === "") return;
      p = { ...p, cursor: next };
      if (typeof page.since === "string" && p.since === undefined) p.since = page.since;
    }
  }

  /** paginate walks a cursor route item by item (`for await`). */
  async *paginate<K extends CursorRoute>(name: K, params?: Params<K>, opts?: CallOptions): AsyncGenerator<Item<K>, void, undefined> {
    for await (const page of this.pages(name, params, opts)) {
      for (const item of (page as unknown as { data?: Item<K>[] }).data ?? []) yield item;
    }
  }

  /** stream follows /v1/stream (`for await`): each message is an event
   * and its cursor. A dropped connection is resumed with Last-Event-ID,
   * with no gap and no duplicate. */
  stream(options: StreamOptions = {}): AsyncGenerator<StreamMessage, void, undefined> {
    const legacy = options.legacy ?? this.options.legacy ?? false;
    return streamEvents(this, { ...options, legacy });
  }

  /** @internal open sends a streaming request: retried as every call,
   * with no timeout (a stream is open-ended). */
  async open(path: string, init: RequestInit & { headers?: Record<string, string> }): Promise<Response> {
    const request = new Request(this.baseUrl + path, { ...init, headers: { ...this.defaultHeaders, ...init.headers } });
    const response = await this.streamFetch(request);
    this.lastResponse = response;
    return response;
  }

  /** @internal the error of a refused streaming or GraphQL request. */
  async errorOf(response: Response): Promise<Error> {
    const text = await response.text();
    let body: ErrorBody | undefined;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return errorFor(response.status, body, response.headers, rateFrom(response.headers), text);
  }
}

// Each route's method, typed: client.radarAll({ since }) and so on.
export interface Client extends Methods {}

/** createClient makes a client. */
export function createCryptointelClient(options: ClientOptions): Client {
  return new Client(options);
}
