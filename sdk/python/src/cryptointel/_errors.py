"""Typed errors: one class per HTTP status the API answers with."""

from __future__ import annotations

from typing import Any, Mapping, Optional

import httpx

__all__ = [
    "CryptointelError", "APIError", "APIConnectionError", "APITimeoutError", "BadRequestError",
    "AuthenticationError", "PaymentRequiredError", "PermissionDeniedError", "NotFoundError",
    "ConflictError", "PayloadTooLargeError", "RateLimitError", "InternalServerError",
    "ServiceUnavailableError", "GraphQLError", "InvalidSignatureError", "StreamClosedError",
]


class CryptointelError(Exception):
    """Every error this library raises."""


class APIError(CryptointelError):
    """An answer other than a success: the status, the server's message and
    code (docs/api/errors.md), the parameter at fault, the request id to quote
    to support, and Retry-After in seconds when the server sent one."""

    status_code: int = 0

    def __init__(self, response: httpx.Response, body: Optional[Mapping[str, Any]] = None) -> None:
        body = body or {}
        self.response = response
        self.status_code = response.status_code
        self.message: str = str(body.get("error") or response.reason_phrase or "HTTP error")
        self.code: Optional[str] = body.get("code")
        self.param: Optional[str] = body.get("param")
        self.doc_url: Optional[str] = body.get("docUrl")
        self.request_id: Optional[str] = body.get("requestId") or response.headers.get("x-request-id")
        self.retry_after: Optional[float] = parse_retry_after(response.headers.get("retry-after"))
        self.body = body
        super().__init__(str(self))

    def __str__(self) -> str:
        s = f"{self.status_code} {self.message}"
        if self.code:
            s += f" ({self.code})"
        if self.request_id:
            s += f" [request {self.request_id}]"
        return s


class BadRequestError(APIError):
    status_code = 400


class AuthenticationError(APIError):
    status_code = 401


class PaymentRequiredError(APIError):
    status_code = 402


class PermissionDeniedError(APIError):
    status_code = 403


class NotFoundError(APIError):
    status_code = 404


class ConflictError(APIError):
    status_code = 409


class PayloadTooLargeError(APIError):
    status_code = 413


class RateLimitError(APIError):
    status_code = 429


class InternalServerError(APIError):
    status_code = 500


class ServiceUnavailableError(APIError):
    status_code = 503


class APIConnectionError(CryptointelError):
    """The request got no answer (connection refused, reset, DNS)."""


class APITimeoutError(APIConnectionError):
    """The request timed out."""


class GraphQLError(CryptointelError):
    """A GraphQL answer carrying errors."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        self.errors = errors
        super().__init__("; ".join(str(e.get("message")) for e in errors))


class InvalidSignatureError(CryptointelError):
    """A webhook delivery whose signature does not match its raw body."""


class StreamClosedError(CryptointelError):
    """The server ended a stream for a reason reconnecting cannot fix."""

    def __init__(self, close: Mapping[str, Any]) -> None:
        self.code = close.get("code")
        self.cursor = close.get("cursor")
        super().__init__(f"{close.get('error')} ({self.code})")


_BY_STATUS = {c.status_code: c for c in (BadRequestError, AuthenticationError, PaymentRequiredError,
                                          PermissionDeniedError, NotFoundError, ConflictError,
                                          PayloadTooLargeError, RateLimitError, InternalServerError,
                                          ServiceUnavailableError)}


def error_for(response: httpx.Response) -> APIError:
    """The typed error of a response that is not a success."""
    try:
        body = response.json()
        if not isinstance(body, dict):
            body = {}
        elif "error" not in body and isinstance(body.get("errors"), list) and body["errors"]:
            e = body["errors"][0]
            body = {"error": e.get("message"), "code": (e.get("extensions") or {}).get("code")}
    except ValueError:
        body = {}
    cls = _BY_STATUS.get(response.status_code)
    if cls is None:
        cls = InternalServerError if response.status_code >= 500 else APIError
    err = cls(response, body)
    err.status_code = response.status_code
    return err


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Retry-After in seconds: delay-seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(float(value.strip()), 0.0)
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime
    import datetime as dt
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max((when - dt.datetime.now(dt.timezone.utc)).total_seconds(), 0.0)
