"""Pay-per-request: a pluggable payer answering x402 v2 offers."""

from __future__ import annotations

import base64
import json
import secrets
import time
from typing import Any, Callable, Mapping, Optional, Protocol

__all__ = ["Payer", "X402Payer", "parse_payment_required"]


class Payer(Protocol):
    """Turns a 402 into a paid retry: given the decoded x402 v2
    PAYMENT-REQUIRED offer, returns the PAYMENT-SIGNATURE header value."""

    def __call__(self, offer: Mapping[str, Any]) -> str: ...


def parse_payment_required(header: Optional[str]) -> dict[str, Any]:
    """Decode a PAYMENT-REQUIRED header (base64 JSON, x402 v2)."""
    if not header:
        raise ValueError("the 402 has no PAYMENT-REQUIRED header (x402 v2)")
    offer = json.loads(base64.b64decode(header))
    if offer.get("x402Version") != 2 or not offer.get("accepts"):
        raise ValueError("PAYMENT-REQUIRED is not an x402 v2 offer")
    return offer


# sign(domain, authorization) -> 0x signature: an EIP-712 signer of the
# EIP-3009 TransferWithAuthorization message (a wallet, a KMS, eth_account's
# sign_typed_data ...).
SignFunc = Callable[[Mapping[str, Any], Mapping[str, str]], str]


class X402Payer:
    """Pays with the x402 "exact" scheme on an EVM network: an EIP-3009
    authorization from ``from_address`` signed by ``sign``. ``max_amount``
    (in the asset's smallest unit) refuses dearer offers."""

    def __init__(self, from_address: str, sign: SignFunc, max_amount: Optional[int] = None) -> None:
        self.from_address = from_address
        self.sign = sign
        self.max_amount = max_amount

    def __call__(self, offer: Mapping[str, Any]) -> str:
        req = next((a for a in offer["accepts"] if a.get("scheme") == "exact"
                    and str(a.get("network", "")).startswith("eip155:")), None)
        if req is None:
            raise ValueError("no exact EVM requirement in the offer")
        amount = int(req["amount"])
        if self.max_amount is not None and amount > self.max_amount:
            raise ValueError(f"the price {amount} is above the payer's maximum {self.max_amount}")
        extra = req.get("extra") or {}
        domain = {"name": extra.get("name", ""), "version": extra.get("version", ""),
                  "chainId": int(str(req["network"]).split(":", 1)[1]), "verifyingContract": req["asset"]}
        now = int(time.time())
        auth = {"from": self.from_address, "to": req["payTo"], "value": str(amount),
                "validAfter": str(now - 600), "validBefore": str(now + int(req.get("maxTimeoutSeconds") or 60)),
                "nonce": "0x" + secrets.token_hex(32)}
        payload = {"x402Version": 2, "resource": offer.get("resource"), "accepted": req,
                   "payload": {"signature": self.sign(domain, auth), "authorization": auth}}
        return base64.b64encode(json.dumps(payload, separators=(",", ":")).encode()).decode()
