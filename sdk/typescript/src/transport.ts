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

const isTimeout = (err: unknown, signal: AbortSignal) =>
  (signal.reason as Error | undefined)?.name === "TimeoutError" || (err as Error)?.name === "TimeoutError";

/** retryingFetch wraps base with retries; requests carry their timeout
 * in their signal (callSignal), renewed for each retry. */
export function retryingFetch(base: FetchLike, retry: RetryOptions, timeoutMs: number): FetchLike {
  const maxRetries = retry.maxRetries ?? 3;
  const delays = { baseDelayMs: retry.baseDelayMs ?? 250, maxDelayMs: retry.maxDelayMs ?? 8000 };
  const maxRetryAfterMs = retry.maxRetryAfterMs ?? 60_000;
  return async (request: Request) => {
    const user = callers.has(request) ? callers.get(request) : request.signal;
    // A body can be read once: keep a copy for the retries.
    const spare = maxRetries > 0 && request.body !== null ? request.clone() : undefined;
    let req = request;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await base(req);
      } catch (err) {
        if (user?.aborted) throw err;
        if (timeoutMs > 0 && isTimeout(err, req.signal)) {
          throw new TimeoutError(`${request.method} ${request.url} timed out after ${timeoutMs} ms`, { cause: err });
        }
        const canRetry = idempotent.has(request.method) || retry.retryNonIdempotent;
        if (!canRetry || attempt >= maxRetries) {
          throw new ConnectionError(`${request.method} ${request.url}: ${(err as Error)?.message ?? err}`, { cause: err });
        }
        const delayMs = backoff(attempt, delays);
        retry.onRetry?.({ attempt: attempt + 1, delayMs, error: err, url: request.url });
        await sleep(delayMs, user);
        req = next(request, spare, timeoutMs, user);
        continue;
      }
      if ((response.status !== 429 && response.status !== 503) || attempt >= maxRetries) return response;
      const ra = retryAfterMs(response.headers);
      if (ra !== undefined && ra > maxRetryAfterMs) return response;
      // Retry-After is the earliest moment; the jitter spreads clients
      // that were refused together.
      const delayMs = ra !== undefined ? ra + Math.random() * delays.baseDelayMs : backoff(attempt, delays);
      await response.body?.cancel().catch(() => {});
      retry.onRetry?.({ attempt: attempt + 1, delayMs, status: response.status, url: request.url });
      await sleep(delayMs, user);
      req = next(request, spare, timeoutMs, user);
    }
  };
}

/** next is the request of a retry: the same request (from the spare copy
 * of its body) with a fresh timeout. */
function next(request: Request, spare: Request | undefined, timeoutMs: number, user: AbortSignal | undefined): Request {
  const source = spare ? spare.clone() : request;
  return new Request(source, { signal: callSignal(timeoutMs, user) ?? null });
}
