// Typed errors: one class per status the API answers, each carrying the
// server's message, its machine-readable code and the request id.

import type { RateInfo } from "./rate.js";

/** The JSON error body of every refusal (docs/api/errors.md). */
export interface ErrorBody {
  error: string;
  code: string;
  docUrl?: string;
  requestId?: string;
  param?: string;
  [key: string]: unknown;
}

/** Base class of every error the client throws. */
export class CryptointelError extends Error {
  override name = "CryptointelError";
}

/** An HTTP answer outside 2xx. `status`, `code` (the server's
 * machine-readable code: invalid, unauthorized, forbidden, not_found,
 * too_large, rate_limited …), `message` (the server's words), `requestId`. */
export class ApiError extends CryptointelError {
  override name = "ApiError";
  readonly status: number;
  readonly code: string;
  readonly requestId: string | undefined;
  readonly docUrl: string | undefined;
  readonly param: string | undefined;
  readonly body: ErrorBody | undefined;
  readonly headers: Headers;
  readonly rate: RateInfo;
  /** Seconds from Retry-After, when the answer carried one. */
  readonly retryAfter: number | undefined;

  constructor(status: number, body: ErrorBody | undefined, headers: Headers, rate: RateInfo, text?: string) {
    super(body?.error ?? (text || `HTTP ${status}`));
    this.status = status;
    this.code = body?.code ?? "";
    this.requestId = body?.requestId ?? headers.get("x-request-id") ?? undefined;
    this.docUrl = body?.docUrl;
    this.param = body?.param;
    this.body = body;
    this.headers = headers;
    this.rate = rate;
    const ra = headers.get("retry-after");
    this.retryAfter = ra !== null && ra !== "" && Number.isFinite(Number(ra)) ? Number(ra) : undefined;
  }
}

export class BadRequestError extends ApiError { override name = "BadRequestError"; }
export class UnauthorizedError extends ApiError { override name = "UnauthorizedError"; }
export class PaymentRequiredError extends ApiError { override name = "PaymentRequiredError"; }
export class ForbiddenError extends ApiError { override name = "ForbiddenError"; }
export class NotFoundError extends ApiError { override name = "NotFoundError"; }
export class MethodNotAllowedError extends ApiError { override name = "MethodNotAllowedError"; }
export class ConflictError extends ApiError { override name = "ConflictError"; }
export class PayloadTooLargeError extends ApiError { override name = "PayloadTooLargeError"; }
export class UnsupportedMediaTypeError extends ApiError { override name = "UnsupportedMediaTypeError"; }
export class RateLimitError extends ApiError { override name = "RateLimitError"; }
export class InternalServerError extends ApiError { override name = "InternalServerError"; }
export class ServiceUnavailableError extends ApiError { override name = "ServiceUnavailableError"; }

const byStatus: Record<number, typeof ApiError> = {
  400: BadRequestError,
  401: UnauthorizedError,
  402: PaymentRequiredError,
  403: ForbiddenError,
  404: NotFoundError,
  405: MethodNotAllowedError,
  409: ConflictError,
  413: PayloadTooLargeError,
  415: UnsupportedMediaTypeError,
  429: RateLimitError,
  500: InternalServerError,
  503: ServiceUnavailableError,
};

/** The typed error of an HTTP answer. */
export function errorFor(status: number, body: ErrorBody | undefined, headers: Headers, rate: RateInfo, text?: string): ApiError {
  const Class = byStatus[status] ?? ApiError;
  return new Class(status, body, headers, rate, text);
}

/** The connection failed (refused, reset, DNS) after every retry. */
export class ConnectionError extends CryptointelError {
  override name = "ConnectionError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A request outlasted its timeout. */
export class TimeoutError extends CryptointelError {
  override name = "TimeoutError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A GraphQL answer with errors: `code` is the first error's extensions.code. */
export class GraphQLError extends CryptointelError {
  override name = "GraphQLError";
  readonly code: string;
  readonly errors: Array<{ message: string; extensions?: Record<string, unknown>; path?: unknown[] }>;
  readonly requestId: string | undefined;
  constructor(errors: GraphQLError["errors"], requestId: string | undefined) {
    super(errors[0]?.message ?? "GraphQL error");
    this.errors = errors;
    this.code = String(errors[0]?.extensions?.code ?? "");
    this.requestId = requestId;
  }
}

/** The server ended a stream for a reason resuming cannot fix (quota,
 * key, plan): `code`, `message`, and `cursor` to resume from once fixed. */
export class StreamClosedError extends CryptointelError {
  override name = "StreamClosedError";
  readonly code: string;
  readonly cursor: string | undefined;
  constructor(message: string, code: string, cursor: string | undefined) {
    super(message);
    this.code = code;
    this.cursor = cursor;
  }
}

/** A webhook delivery whose signature does not match its raw body. */
export class WebhookSignatureError extends CryptointelError {
  override name = "WebhookSignatureError";
}
