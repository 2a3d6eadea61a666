// The fetch every call goes through: a timeout per attempt, and retries
// with exponential backoff and full jitter on 429, 503 and connection
// errors, honouring Retry-After, bounded. No other 4xx is retried:
// retrying cannot fix a bad request, a key, a plan or a missing resource.

import { ConnectionError, TimeoutError } from "./errors.js";

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 disables retrying). */
  maxRetries?: number;
  /** Base of the exponential backoff in ms (default 250): attempt n waits
   * a random time up to min(maxDelayMs, baseDelayMs * 2^n). */
  baseDelayMs?: number;
  /** Cap of one backoff wait in ms (default 8000). */
  maxDelayMs?: number;
  /** The longest Retry-After the client waits out, in ms (default 60000):
   * a longer one is thrown to the caller at once. */
  maxRetryAfterMs?: number;
  /** Retry connection errors of POST and PATCH too (default false: the
   * request may have been processed). 429 and 503 are always safe. */
  retryNonIdempotent?: boolean;
  /** Called before each retry, with the wait in ms and the reason. */
  onRetry?: (info: { attempt: number; delayMs: number; status?: number; error?: unknown; url: string }) => void;
}

export type FetchLike = (input: Request) => Promise<Response>;

const idempotent = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);

export const sleep = (ms: number, signal?: AbortSignal | null) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** backoff is the wait before retry `attempt` (0-based): full jitter. */
export function backoff(attempt: number, o: Required<Pick<RetryOptions, "baseDelayMs" | "maxDelayMs">>): number {
  return Math.random() * Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** attempt);
}

/** retryAfterMs reads Retry-After (seconds or an HTTP date). */
export function retryAfterMs(h: Headers): number | undefined {
  const v = h.get("retry-after");
  if (v === null || v === "") return undefined;
  const s = Number(v);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const d = Date.parse(v);
  return Number.isNaN(d) ? undefined : Math.max(0, d - Date.now());
}

/** callers maps each Request a call made to the caller's own signal (or
 * undefined): the Request's signal also carries the attempt's timeout
 * (callSignal), and a retry gets a fresh timeout but keeps the caller's. */
const callers = new WeakMap<Request, AbortSignal | undefined>();

/** callSignal is the signal of one attempt: the timeout (when
 * timeoutMs > 0) joined with the caller's signal. */
export function callSignal(timeoutMs: number, user?: AbortSignal): AbortSignal | undefined {
  if (timeoutMs <= 0) return user;
  const timeout = AbortSignal.timeout(timeoutMs);
  return user ? AbortSignal.any([user, timeout]) : timeout;
}

/** callRequest is the Request of a call's first attempt, remembered with
 * the caller's signal. */
export function callRequest(url: string, init: RequestInit, timeoutMs: number, user?: AbortSignal): Request {
  const request = new Request(url, { ...init, signal: callSignal(timeoutMs, user) ?? null });
  callers.set(request, user);
  return request;
}

const isTimeout = (err: unknown, signal: AbortSignal | null | undefined) =>
  (signal?.reason as Error | undefined)?.name === "TimeoutError" || (err as Error)?.name === "TimeoutError";

/** Attempt sends one attempt of a call with its signal (the attempt's
 * timeout joined with the caller's signal, see callSignal). */
type Attempt = (signal: AbortSignal | undefined, attempt: number) => Promise<Response>;

/** retrying makes the retry loop of retryingFetch and retryingSend: an
 * attempt, then retries with backoff on 429, 503 and connection errors;
 * with signals, each retry gets a fresh one (callSignal). */
function retrying(retry: RetryOptions, timeoutMs: number, signals: boolean) {
  const maxRetries = retry.maxRetries ?? 3;
  const delays = { baseDelayMs: retry.baseDelayMs ?? 250, maxDelayMs: retry.maxDelayMs ?? 8000 };
  const maxRetryAfterMs = retry.maxRetryAfterMs ?? 60_000;
  return async (method: string, url: string, user: AbortSignal | undefined, first: AbortSignal | null | undefined, send: Attempt): Promise<Response> => {
    let signal = first;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await send(signal ?? undefined, attempt);
      } catch (err) {
        if (user?.aborted) throw err;
        if (timeoutMs > 0 && isTimeout(err, signal)) {
          throw new TimeoutError(`${method} ${url} timed out after ${timeoutMs} ms`, { cause: err });
        }
        const canRetry = idempotent.has(method) || retry.retryNonIdempotent;
        if (!canRetry || attempt >= maxRetries) {
          throw new ConnectionError(`${method} ${url}: ${(err as Error)?.message ?? err}`, { cause: err });
        }
        const delayMs = backoff(attempt, delays);
        retry.onRetry?.({ attempt: attempt + 1, delayMs, error: err, url });
        await sleep(delayMs, user);
        if (signals) signal = callSignal(timeoutMs, user);
        continue;
      }
      if ((response.status !== 429 && response.status !== 503) || attempt >= maxRetries) return response;
      const ra = retryAfterMs(response.headers);
      if (ra !== undefined && ra > maxRetryAfterMs) return response;
      // Retry-After is the earliest moment; the jitter spreads clients
      // that were refused together.
      const delayMs = ra !== undefined ? ra + Math.random() * delays.baseDelayMs : backoff(attempt, delays);
      await response.body?.cancel().catch(() => {});
      retry.onRetry?.({ attempt: attempt + 1, delayMs, status: response.status, url });
      await sleep(delayMs, user);
      if (signals) signal = callSignal(timeoutMs, user);
    }
  };
}

/** retryingFetch wraps base with retries; requests carry their timeout
 * in their signal (callSignal), renewed for each retry. */
export function retryingFetch(base: FetchLike, retry: RetryOptions, timeoutMs: number): FetchLike {
  const loop = retrying(retry, timeoutMs, true);
  const maxRetries = retry.maxRetries ?? 3;
  return (request: Request) => {
    const user = callers.has(request) ? callers.get(request) : request.signal;
    // A body can be read once: keep a copy for the retries.
    const spare = maxRetries > 0 && request.body !== null ? request.clone() : undefined;
    return loop(request.method, request.url, user, request.signal, (signal, attempt) =>
      base(attempt === 0 ? request : new Request(spare ? spare.clone() : request, { signal: signal ?? null })),
    );
  };
}

/** Send sends a request given as a URL and its init (a string body). */
export type Send = (url: string, init: RequestInit) => Promise<Response>;

/** timeoutError is what a timed-out attempt rejects with (the reason
 * AbortSignal.timeout gives). */
const timeoutError = () => new DOMException("The operation was aborted due to timeout", "TimeoutError");

/** A Deadline is an attempt's timeout: races against it reject with a
 * TimeoutError once it is past, until it is cleared. */
export interface Deadline {
  at: number;
  done: boolean;
  over: boolean;
  fail?: (err: unknown) => void;
}

/** Deadlines is the one timer of a client's attempts: its deadlines come
 * in the order they fall (one timeout for all), in a queue whose head
 * the timer waits for; a cleared head is dropped when the next attempt
 * starts, so sequential calls keep it short, and the timer is re-armed
 * only when it fires. Cheaper than a timer (or an AbortSignal.timeout)
 * per attempt. */
export class Deadlines {
  private queue: Deadline[] = [];
  private head = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  constructor(private readonly ms: number) {}

  start(): Deadline {
    const d: Deadline = { at: performance.now() + this.ms, done: false, over: false };
    while (this.head < this.queue.length && this.queue[this.head].done) this.head++;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    }
    this.queue.push(d);
    if (this.timer === undefined) this.arm(this.ms);
    return d;
  }

  /** race settles as p does, or rejects with a TimeoutError once d is
   * past; a value that comes later goes to late (to release it). */
  race<T>(d: Deadline, p: Promise<T>, late?: (v: T) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      d.fail = reject;
      if (d.over) reject(timeoutError());
      p.then(
        (v) => (d.over ? late?.(v) : resolve(v)),
        (err) => {
          if (!d.over) reject(err);
        },
      );
    });
  }

  clear(d: Deadline) {
    d.done = true;
    d.fail = undefined;
  }

  private arm(ms: number) {
    this.timer = setTimeout(() => this.fire(), Math.max(1, ms));
    this.timer.unref?.();
  }

  private fire() {
    this.timer = undefined;
    const now = performance.now();
    while (this.head < this.queue.length) {
      const d = this.queue[this.head];
      if (!d.done) {
        if (d.at > now) return this.arm(d.at - now);
        d.over = true;
        d.done = true;
        d.fail?.(timeoutError());
        d.fail = undefined;
      }
      this.head++;
    }
    this.queue.length = 0;
    this.head = 0;
  }
}

/** A call's answer and its attempt's deadline (undefined without a
 * timeout), which runs on while the body is read, then is cleared. */
export interface Answer {
  response: Response;
  deadline: Deadline | undefined;
  deadlines: Deadlines | undefined;
}

const discard = (r: Response) => void r.body?.cancel().catch(() => {});

/** retryingSend is retryingFetch for a call given as its URL and init,
 * made lean for the methods' calls: with the default fetch no Request is
 * built (fetch builds its own), and the timeout is the client's one
 * timer (Deadlines), not a signal that fetch follows (following one
 * costs about a tenth of a call's CPU): past it the attempt throws
 * TimeoutError, and the request is left to finish (bounded by fetch's
 * own timeouts) with its body discarded. The caller's signal, when
 * given, still aborts the request. The body is a string, sent again as
 * is on a retry. */
export function retryingSend(send: Send, retry: RetryOptions, timeoutMs: number) {
  const loop = retrying(retry, timeoutMs, false);
  const deadlines = timeoutMs > 0 ? new Deadlines(timeoutMs) : undefined;
  return async (method: string, url: string, init: RequestInit, user: AbortSignal | undefined): Promise<Answer> => {
    const sent = user ? { ...init, signal: user } : init;
    let deadline: Deadline | undefined;
    const response = await loop(method, url, user, undefined, () => {
      if (!deadlines) return send(url, sent);
      if (deadline) deadlines.clear(deadline);
      deadline = deadlines.start();
      return deadlines.race(deadline, send(url, sent), discard);
    });
    return { response, deadline, deadlines };
  };
}

/** readWithin is read (the answer's body being read) within the
 * answer's deadline, which is cleared after. */
export async function readWithin<T>(a: Answer, read: Promise<T>): Promise<T> {
  if (!a.deadline || !a.deadlines) return read;
  try {
    return await a.deadlines.race(a.deadline, read);
  } finally {
    a.deadlines.clear(a.deadline);
  }
}
