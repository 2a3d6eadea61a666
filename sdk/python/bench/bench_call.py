"""The cost of the library over a raw httpx call of the same route
(GET /v1/latest?limit=10, a page of ten lean events as the demo server
answers it, tests/data/latest.json), on the client's side only: both go
through an httpx transport that answers from memory, so the numbers are the
client's CPU (the process's CPU clock, each library call alternated
with a raw one), not the network's or the server's. The
raw call sends the same URL and headers with httpx and decodes the JSON.

    /usr/bin/python3 bench/bench_call.py            # from sdk/python
"""

from __future__ import annotations

import pathlib
import statistics
import sys
import time

import httpx

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "src"))
import cryptointel  # noqa: E402

BODY = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "latest.json").read_bytes()
HEADERS = {
    "content-type": "application/json; charset=utf-8", "x-request-id": "6VULP5J7C3K2MZMR7YHXRMD7I2",
    "x-plan-tier": "enterprise", "x-credit-cost": "1", "x-ratelimit-limit": "100", "x-ratelimit-remaining": "99",
    "x-ratelimit-reset": "10", "x-monthly-limit": "10000000", "x-monthly-used": "15",
    "x-monthly-remaining": "9999985", "x-api-surface": "feed", "x-access-layer": "evaluation",
    "x-endpoint-policy": "latest", "etag": '"AAAkEY3BLimDWI1z"',
}


def answer(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, headers=HEADERS, content=BODY)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    lib = cryptointel.Client("ci_bench", base_url="http://127.0.0.1:8080",
                             http_client=httpx.Client(transport=httpx.MockTransport(answer)))
    raw = httpx.Client(transport=httpx.MockTransport(answer))

    def library_call() -> None:
        assert len(lib.get_latest(limit=10)["data"]) == 10

    def raw_call() -> None:
        r = raw.get("http://127.0.0.1:8080/v1/latest", params={"limit": "10", "legacy": "false"},
                    headers={"Authorization": "Bearer ci_bench", "User-Agent": "raw"})
        r.raise_for_status()
        assert len(r.json()["data"]) == 10

    for _ in range(n // 10):  # warm up
        library_call()
        raw_call()
    clock = time.process_time_ns
    libs, raws = [], []
    for _ in range(rounds):
        lib_ns = raw_ns = 0
        for _ in range(n):  # alternated, so what else the machine does weighs on both alike
            t0 = clock()
            library_call()
            t1 = clock()
            raw_call()
            raw_ns += clock() - t1
            lib_ns += t1 - t0
        libs.append(lib_ns / n / 1000)
        raws.append(raw_ns / n / 1000)
    lib_us, raw_us = statistics.median(libs), statistics.median(raws)
    print(f"library call: {lib_us:.1f} us CPU/op (median of {rounds} rounds of {n})")
    print(f"raw httpx call: {raw_us:.1f} us CPU/op")
    print(f"overhead: {100 * (lib_us - raw_us) / raw_us:+.1f}%")


if __name__ == "__main__":
    main()
