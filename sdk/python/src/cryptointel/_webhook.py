"""Webhook signature verification."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from typing import Mapping, Optional, Union

from ._errors import InvalidSignatureError


def _header(headers: Mapping[str, str], name: str) -> Optional[str]:
    for k, v in headers.items():
        if k.lower() == name.lower():
            return v
    return None


def verify_webhook(secret: str, body: Union[bytes, bytearray], headers: Mapping[str, str],
                   tolerance: float = 300.0, now: Optional[float] = None) -> None:
    """Check a delivery with the webhook's secret on the raw body, exactly as
    received (before any JSON parsing), comparing in constant time.

    Both schemes the service signs with are checked when present: Standard
    Webhooks (webhook-id, webhook-timestamp within ``tolerance`` seconds,
    webhook-signature) and X-Service-Signature; at least one must be present.
    Raises InvalidSignatureError when a signature does not match."""
    if not isinstance(body, (bytes, bytearray)):
        raise TypeError("verify_webhook needs the raw body as bytes, before any parsing")
    body = bytes(body)
    checked = False
    sigs = _header(headers, "webhook-signature")
    if sigs:
        try:
            ts = int(_header(headers, "webhook-timestamp") or "")
        except ValueError:
            raise InvalidSignatureError("invalid webhook-timestamp") from None
        now = time.time() if now is None else now
        if abs(now - ts) > tolerance:
            raise InvalidSignatureError("webhook-timestamp outside the tolerance")
        raw = secret[len("whsec_"):] if secret.startswith("whsec_") else secret
        try:
            key = base64.b64decode(raw, validate=True)
        except (binascii.Error, ValueError):
            key = raw.encode()
        signed = f"{_header(headers, 'webhook-id') or ''}.{ts}.".encode() + body
        want = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
        if not any(hmac.compare_digest(s.encode(), want.encode()) for s in sigs.split()):
            raise InvalidSignatureError("webhook-signature does not match the body")
        checked = True
    sig = _header(headers, "x-service-signature")
    if sig:
        want = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(sig.encode(), want.encode()):
            raise InvalidSignatureError("X-Service-Signature does not match the body")
        checked = True
    if not checked:
        raise InvalidSignatureError("no signature header")
