"""The client: the generated route methods over httpx, with retries, typed
errors, the rate window and credits of each answer, cursor walks, the event
stream, GraphQL and pay-per-request."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import random
import time
from typing import Any, Callable, Iterator, Mapping, Optional, TypeVar

import httpx

from ._errors import (APIConnectionError, APIError, APITimeoutError, GraphQLError, StreamClosedError,
                      error_for)
from ._generated import _Routes
from ._payer import Payer, parse_payment_required

__all__ = ["Client", "Meta", "RetryPolicy", "StreamEvent", "SubscriptionMessage", "VERSION"]

VERSION = "1.0.0"
DEFAULT_BASE_URL = "http://localhost:8080"

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """Retries of a request answered 429 or 503, or that could not connect;
    nothing else is retried (a 4xx that retrying cannot fix is raised at
    once). Backoff doubles from ``base_delay`` up to ``max_delay`` with full
    jitter; a Retry-After is honoured up to ``max_retry_after`` seconds (a
    longer one is raised)."""

    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0

    def backoff(self, attempt: int) -> float:
        cap = min(self.max_delay, self.base_delay * (2 ** attempt))
        return random.uniform(0, cap)


@dataclasses.dataclass(frozen=True)
class Meta:
    """What an answer's headers say about the caller's limits."""

    status_code: int
    request_id: Optional[str]
    plan_tier: Optional[str]
    credit_cost: Optional[int]
    rate_limit: Optional[int]
    rate_remaining: Optional[int]
    rate_reset: Optional[int]
    monthly_limit: Optional[int]
    monthly_used: Optional[int]
    monthly_remaining: Optional[int]
    attempts: int

    @classmethod
    def of(cls, r: httpx.Response, attempts: int) -> "Meta":
        h = r.headers

        def num(name: str) -> Optional[int]:
            v = h.get(name)
            try:
                return int(v) if v is not None else None
            except ValueError:
                return None

        return cls(r.status_code, h.get("x-request-id"), h.get("x-plan-tier"), num("x-credit-cost"),
                   num("x-ratelimit-limit"), num("x-ratelimit-remaining"), num("x-ratelimit-reset"),
                   num("x-monthly-limit"), num("x-monthly-used"), num("x-monthly-remaining"), attempts)


@dataclasses.dataclass(frozen=True)
class StreamEvent:
    """One message of /v1/stream: its id (the cursor to resume after it) and
    its event."""

    id: str
    data: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class SubscriptionMessage:
    """One result of a GraphQL subscription: its data (shaped like the
    selection), the cursor to resume after it and its extensions."""

    data: dict[str, Any]
    cursor: str
    extensions: dict[str, Any]


# The codes with which the server ends a stream or subscription that a
# reconnect resumes.
_RESUMABLE = ("slow_consumer", "shutting_down", "unavailable")


def _sse_messages(r: httpx.Response) -> Iterator[tuple[Optional[str], Optional[str], list[str]]]:
    """The (id, event, data lines) of each server-sent event of r that sets
    any of them: the one reader of the format, for /v1/stream and for
    subscriptions."""
    ev_id, ev_type, data = None, None, []
    for line in r.iter_lines():
        line = line.rstrip("\r\n")  # httpx before 0.24 keeps the line ending
        if line == "":
            if ev_id or ev_type or data:
                yield ev_id, ev_type, data
            ev_id, ev_type, data = None, None, []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "id":
            ev_id = value
        elif field == "event":
            ev_type = value
        elif field == "data":
            data.append(value)


def _sse(r: httpx.Response) -> Iterator[tuple[str, str]]:
    """The (event, data) of each server-sent event of r with an event type
    or data ("message" when unnamed)."""
    for _, ev_type, data in _sse_messages(r):
        if data or ev_type:
            yield ev_type or "message", "\n".join(data)


def _wire(v: Any) -> Optional[str]:
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=_dt.timezone.utc)
        return v.astimezone(_dt.timezone.utc).isoformat().replace("+00:00", "Z")
    if isinstance(v, (list, tuple)):
        return ",".join(str(_wire(x)) for x in v)
    return str(v)


class Client(_Routes):
    """A client of the cryptointel API.

    One method per /v1 route (``get_latest``, ``get_entities_by_id`` …, typed
    from the OpenAPI document) returns the decoded JSON body; any other
    answer raises the typed error of its status. ``last_meta`` holds the rate
    window and credits of the last answer, ``last_response`` the answer
    itself."""

    def __init__(self, api_key: Optional[str] = None, *, base_url: str = DEFAULT_BASE_URL,
                 timeout: float = 30.0, retry: RetryPolicy = RetryPolicy(), legacy: bool = False,
                 payer: Optional[Payer] = None, http_client: Optional[httpx.Client] = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.retry = retry
        self.legacy = legacy
        self.payer = payer
        self._sleep = sleep
        headers = {"User-Agent": f"cryptointel-python/{VERSION}"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http = http_client or httpx.Client(timeout=timeout)
        self._headers = headers
        self.last_response: Optional[httpx.Response] = None
        self._last_attempts = 0
        self._last_meta: Optional[Meta] = None
        self._last_meta_of: Optional[httpx.Response] = None

    @property
    def last_meta(self) -> Optional[Meta]:
        """The rate window, credits and request id of the last answer (read
        from its headers when asked)."""
        r = self.last_response
        if r is None:
            return None
        if self._last_meta is None or self._last_meta_of is not r:
            self._last_meta = Meta.of(r, self._last_attempts)
            self._last_meta_of = r
        return self._last_meta

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # The generated methods call _call.
    def _call(self, method: str, path: str, query: Mapping[str, Any], body: Any = None,
              legacy: Any = ...) -> Any:
        params = {k: w for k, v in query.items() if (w := _wire(v)) is not None}
        if legacy is not ...:
            params["legacy"] = _wire(self.legacy if legacy is None else legacy)
        r = self.request(method, path, params=params, json=body)
        if r.status_code == 204 or not r.content:
            return None
        return r.json()

    def request(self, method: str, path: str, *, params: Optional[Mapping[str, str]] = None,
                json: Any = None, headers: Optional[Mapping[str, str]] = None,
                stream: bool = False) -> httpx.Response:
        """Send one request with the client's credential, retries and payer;
        return the successful httpx.Response or raise its typed error."""
        hdrs = dict(self._headers)
        if headers:
            hdrs.update(headers)
        url = self.base_url + path
        paid = False
        attempt = 0
        while True:
            try:
                req = self._http.build_request(method, url, params=params, json=json, headers=hdrs)
                r = self._http.send(req, stream=stream)
            except httpx.TimeoutException as e:
                raise APITimeoutError(str(e)) from e
            except httpx.TransportError as e:
                if attempt >= self.retry.max_retries:
                    raise APIConnectionError(str(e)) from e
                self._sleep(self.retry.backoff(attempt))
                attempt += 1
                continue
            self.last_response = r
            self._last_attempts = attempt + 1
            if r.status_code < 400:
                return r
            if stream:
                r.read()
                r.close()
            err = error_for(r)
            if r.status_code == 402 and self.payer is not None and not paid:
                offer = parse_payment_required(r.headers.get("payment-required"))
                hdrs["PAYMENT-SIGNATURE"] = self.payer(offer)
                paid = True
                continue
            if r.status_code not in (429, 503) or attempt >= self.retry.max_retries:
                raise err
            wait = self.retry.backoff(attempt)
            if err.retry_after is not None:
                if err.retry_after > self.retry.max_retry_after:
                    raise err
                wait = err.retry_after
            self._sleep(wait)
            attempt += 1

    # Cursor walks.
    def pages(self, method: Callable[..., T], **kwargs: Any) -> Iterator[T]:
        """Each page of a cursor route: ``method`` is one of this client's
        route methods (``client.get_radar_all`` …) and kwargs its
        parameters. The walk keeps the first page's ``since`` and stops at a
        null next_cursor."""
        kwargs = dict(kwargs)
        while True:
            page: Any = method(**kwargs)
            yield page
            nxt = page.get("next_cursor") if isinstance(page, dict) else None
            if not nxt:
                return
            kwargs["cursor"] = nxt
            if kwargs.get("since") is None and page.get("since"):
                kwargs["since"] = page["since"]

    def paginate(self, method: Callable[..., Any], **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Each item (``data`` entry) of every page of a cursor walk."""
        for page in self.pages(method, **kwargs):
            yield from page.get("data") or []

    # The event stream.
    def stream(self, *, surface: Optional[str] = None, category: Optional[str] = None,
               organization_id: Optional[int] = None, cursor: Optional[str] = None,
               last_event_id: Optional[str] = None, legacy: Optional[bool] = None) -> Iterator[StreamEvent]:
        """Follow GET /v1/stream: each pushed event, in order. A dropped
        connection (or a close the server asks clients to resume from) is
        reconnected with Last-Event-ID set to the last id received, so no
        event is lost or repeated; reconnects follow the retry policy, whose
        count restarts with each event. Stop by breaking out of the loop."""
        params = {k: w for k, v in {"surface": surface, "category": category,
                                    "organizationId": organization_id, "cursor": cursor}.items()
                  if (w := _wire(v)) is not None}
        params["legacy"] = _wire(self.legacy if legacy is None else legacy) or "false"
        last = last_event_id
        failures = 0
        while True:
            headers = {"Accept": "text/event-stream"}
            if last:
                headers["Last-Event-ID"] = last
            r = self.request("GET", "/v1/stream", params=params, headers=headers, stream=True)
            close: Optional[dict[str, Any]] = None
            try:
                for ev_id, ev_type, data in _sse_messages(r):
                    if ev_type == "close":
                        close = json.loads("\n".join(data) or "{}")
                        break
                    if ev_id:
                        last = ev_id
                    if data:
                        failures = 0
                        yield StreamEvent(ev_id or "", json.loads("\n".join(data)))
            except httpx.TransportError:
                failures += 1
                if failures > self.retry.max_retries:
                    raise APIConnectionError("the stream's connection dropped too often") from None
            finally:
                r.close()
            if close is not None:
                if close.get("code") not in _RESUMABLE:
                    raise StreamClosedError(close)
                last = close.get("cursor") or last
            self._sleep(self.retry.backoff(min(failures, 1)))

    # GraphQL.
    def subscribe(self, query: str, variables: Optional[Mapping[str, Any]] = None) -> Iterator[SubscriptionMessage]:
        """Follow a GraphQL subscription (server-sent events on /graphql):
        each result, in order. The document must declare ``$after: String``
        and pass it to the field, e.g. ``subscription($after: String) {
        events(after: $after) { id title } }``; without ``after`` in
        variables it starts at the cursor of "now" (streamCursor, read
        first). A dropped connection (or an end the server asks clients to
        resume from) is followed by a new subscription with ``after`` set to
        the last result's cursor, so no result is lost or repeated;
        reconnects follow the retry policy, whose count restarts with each
        result. It raises StreamClosedError when the server ends it for
        good, GraphQLError for a document it refuses. Stop by breaking out
        of the loop."""
        variables = dict(variables or {})
        if not variables.get("after"):
            variables["after"] = self.query("{ streamCursor }")["streamCursor"]
        failures = 0
        while True:
            try:
                r = self.request("POST", "/graphql", json={"query": query, "variables": variables},
                                 headers={"Accept": "text/event-stream"}, stream=True)
            except APIError as e:
                errors = e.response.json().get("errors") if e.status_code == 422 else None
                if errors:  # a document that does not validate
                    raise GraphQLError(errors) from None
                raise
            resumed = False
            try:
                for event, data in _sse(r):
                    if event == "complete":
                        return
                    if event != "next":
                        continue
                    payload = json.loads(data)
                    if payload.get("errors"):
                        first = payload["errors"][0]
                        ext = first.get("extensions") or {}
                        if ext.get("cursor"):
                            variables["after"] = ext["cursor"]
                        if ext.get("code") in _RESUMABLE:
                            resumed = True
                            break
                        if ext.get("cursor"):
                            raise StreamClosedError({"code": ext.get("code"), "cursor": ext["cursor"],
                                                     "error": first.get("message")})
                        raise GraphQLError(payload["errors"])
                    extensions = payload.get("extensions") or {}
                    cursor = extensions.get("cursor") or ""
                    if cursor:
                        variables["after"] = cursor
                    failures = 0
                    yield SubscriptionMessage(payload.get("data") or {}, cursor, extensions)
            except httpx.TransportError:
                pass
            finally:
                r.close()
            if not resumed:
                failures += 1
                if failures > self.retry.max_retries:
                    raise APIConnectionError("the subscription's connection dropped too often")
            self._sleep(self.retry.backoff(max(failures - 1, 0)))

    def query(self, query: str, variables: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
        """Run a GraphQL query on /graphql; return its data or raise
        GraphQLError with its errors (also for a document that does not
        validate, 422)."""
        try:
            r = self.request("POST", "/graphql", json={"query": query, "variables": dict(variables or {})})
        except APIError as e:
            errors = e.response.json().get("errors") if e.status_code == 422 else None
            if errors:  # a document that does not validate
                raise GraphQLError(errors) from None
            raise
        body = r.json()
        if body.get("errors"):
            raise GraphQLError(body["errors"])
        return body.get("data") or {}
