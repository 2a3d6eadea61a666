"""The python blocks of docs/sdk/python.md, run as written against the live
demo server (tests/sdk_test.go starts it; localhost:8080 meaning it), in
order and in one namespace, as a reader pastes them. The blocks that never
end (a stream, a subscription) or need what a reader brings (a webhook's
secret and body, a wallet's signer) are shown only: test_live.py makes the
same calls."""

from __future__ import annotations

import os
import pathlib
import re
import signal

import pytest

import cryptointel

BASE = os.environ.get("CRYPTOINTEL_BASE_URL")
pytestmark = pytest.mark.skipif(not BASE, reason="CRYPTOINTEL_BASE_URL is not set: tests/sdk_test.go runs these")

PAGE = pathlib.Path(__file__).resolve().parents[3] / "docs" / "sdk" / "python.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```$", PAGE.read_text(), re.S | re.M)
SHOWN_ONLY = ("client.stream(", "client.subscribe(", "verify_webhook(secret", "X402Payer(")


def test_docs_snippets(monkeypatch, capsys):
    monkeypatch.setenv("KEY", os.environ["CRYPTOINTEL_KEY_ENTERPRISE"])

    def expired(signum, frame):
        raise TimeoutError("the snippets ran past their 90 s deadline")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(90)
    try:
        run = [b for b in BLOCKS if not any(s in b for s in SHOWN_ONLY)]
        assert len(BLOCKS) >= 8 and len(run) >= 5, f"{len(BLOCKS)} python blocks, {len(run)} to run"
        namespace = {"os": os, "cryptointel": cryptointel}
        for block in run:
            exec(compile(block.replace("http://localhost:8080", BASE), str(PAGE), "exec"), namespace)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    out = capsys.readouterr().out
    assert "Ethereum" in out and "404" in out, out
    assert len(namespace["df"]) > 0 and len(namespace["history"]) > 0
