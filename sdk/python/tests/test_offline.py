"""Tests that need no server: signatures against known answers, the retry
policy against answers served from memory, and the DataFrame of a page as
the demo server answers it."""

from __future__ import annotations

import json
import pathlib

import httpx
import pytest

import cryptointel
from cryptointel import Client, RetryPolicy
from cryptointel._errors import parse_retry_after

DATA = pathlib.Path(__file__).parent / "data"


def test_standard_webhooks_known_answer():
    # Standard Webhooks' reference vector.
    headers = {"webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek", "webhook-timestamp": "1614265330",
               "webhook-signature": "v1,bogus v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="}
    body = b'{"test": 2432232314}'
    cryptointel.verify_webhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", body, headers, now=1614265330)
    with pytest.raises(cryptointel.InvalidSignatureError):
        cryptointel.verify_webhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", body + b" ", headers, now=1614265330)
    with pytest.raises(cryptointel.InvalidSignatureError):  # replayed an hour later
        cryptointel.verify_webhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", body, headers, now=1614265330 + 3600)


def test_service_signature_known_answer():
    # RFC 4231 test case 2 (HMAC-SHA256, key "Jefe").
    body = b"what do ya want for nothing?"
    sig = "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    cryptointel.verify_webhook("Jefe", body, {"X-Service-Signature": sig})
    for secret, b, s in (("jefe", body, sig), ("Jefe", body + b"!", sig), ("Jefe", body, sig.upper())):
        with pytest.raises(cryptointel.InvalidSignatureError):
            cryptointel.verify_webhook(secret, b, {"X-Service-Signature": s})
    with pytest.raises(cryptointel.InvalidSignatureError):
        cryptointel.verify_webhook("Jefe", body, {})


def test_retry_after_forms():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past


def served(*answers: httpx.Response) -> tuple[Client, list[httpx.Request], list[float]]:
    """A client whose requests are answered from answers, in order."""
    sent: list[httpx.Request] = []
    waits: list[float] = []
    it = iter(answers)

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return next(it)

    c = Client("ci_test", base_url="http://api.test", http_client=httpx.Client(transport=httpx.MockTransport(handler)),
               sleep=waits.append)
    return c, sent, waits


def err(status: int, **headers: str) -> httpx.Response:
    return httpx.Response(status, headers=headers, json={"error": "no", "code": "x", "requestId": "R1"})


def test_retries_503_and_429_then_succeeds():
    c, sent, waits = served(err(503), err(429, **{"Retry-After": "2"}), httpx.Response(200, json={"data": {}}))
    assert c.get_usage() == {"data": {}}
    assert len(sent) == 3 and waits[1] == 2.0 and 0 <= waits[0] <= 0.5
    assert c.last_meta.attempts == 3


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 413, 500])
def test_never_retries_what_retrying_cannot_fix(status):
    c, sent, _ = served(err(status))
    with pytest.raises(cryptointel.APIError) as info:
        c.get_usage()
    assert len(sent) == 1 and info.value.status_code == status and info.value.request_id == "R1"


def test_retries_are_bounded():
    c, sent, waits = served(*[err(503)] * 10)
    c.retry = RetryPolicy(max_retries=2)
    with pytest.raises(cryptointel.ServiceUnavailableError):
        c.get_usage()
    assert len(sent) == 3 and len(waits) == 2


def test_a_long_retry_after_is_raised_at_once():
    c, sent, waits = served(err(429, **{"Retry-After": "3600"}))
    with pytest.raises(cryptointel.RateLimitError) as info:
        c.get_usage()
    assert info.value.retry_after == 3600 and not waits and len(sent) == 1


def test_lean_by_default_and_parameters():
    c, sent, _ = served(httpx.Response(200, json={"data": []}), httpx.Response(200, json={"data": []}))
    c.get_latest(limit=5, since="2026-11-20T00:00:00Z")
    c.get_brief_batch(ids=[101, 103], since="2026-11-20T00:00:00Z", legacy=True)
    assert dict(sent[0].url.params) == {"limit": "5", "since": "2026-11-20T00:00:00Z", "legacy": "false"}
    assert sent[1].url.params["ids"] == "101,103" and sent[1].url.params["legacy"] == "true"
    assert sent[0].headers["authorization"] == "Bearer ci_test"


def test_dataframe_of_a_page():
    pd = pytest.importorskip("pandas")
    page = json.loads((DATA / "latest.json").read_text())
    df = cryptointel.to_pandas(page)
    assert isinstance(df.index, pd.DatetimeIndex) and df.index.name == "latestEvidenceTimestamp"
    assert len(df) == 10 and df.index.is_monotonic_increasing
