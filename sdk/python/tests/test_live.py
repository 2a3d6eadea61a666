"""Tests against a live server: tests/sdk_test.go in the service's
repository starts one and runs pytest here with its address and keys in the
environment (CRYPTOINTEL_*). Without them the tests skip."""

from __future__ import annotations

import datetime as dt
import http.server
import json
import os
import queue
import socket
import threading
import time
import urllib.request

import httpx
import pytest

import cryptointel
from cryptointel import Client, RetryPolicy

BASE = os.environ.get("CRYPTOINTEL_BASE_URL")
pytestmark = pytest.mark.skipif(not BASE, reason="CRYPTOINTEL_BASE_URL is not set: tests/sdk_test.go runs these")


def key(plan: str) -> str:
    return os.environ[f"CRYPTOINTEL_KEY_{plan.upper()}"]


class Recorder(httpx.HTTPTransport):
    """Remembers every request sent."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return super().handle_request(request)


def recording_client(plan: str = "enterprise", **kw) -> tuple[Client, Recorder]:
    rec = Recorder()
    return Client(key(plan), base_url=BASE, http_client=httpx.Client(transport=rec, timeout=30), **kw), rec


def route_matches(template: str, path: str) -> bool:
    t, p = template.split("/"), path.split("/")
    return len(t) == len(p) and all(a.startswith("{") or a == b for a, b in zip(t, p))


class Receiver:
    """A webhook receiver on loopback keeping each delivery's raw body."""

    def __init__(self) -> None:
        self.deliveries: queue.Queue = queue.Queue()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.deliveries.put((body, dict(self.headers.items())))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def next(self, timeout: float = 60):
        return self.deliveries.get(timeout=timeout)

    def close(self) -> None:
        self.server.shutdown()


def test_every_route():
    c, rec = recording_client()
    since = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=6)
    assert c.get_brief(id=101, since=since)["data"]
    c.get_brief_batch(ids=[101, 103], since=since)
    c.get_categories_all()
    assert c.get_entities_by_id(id=101)["data"]["canonicalName"] == "Ethereum"
    c.get_entities_by_name(name="Ethereum")
    c.get_entities_by_top_name(name="Ethereum")
    c.get_entities_id_media(id=101)
    c.get_entities_id_references(id=101)
    c.get_entities_id_relationships(id=101)
    c.get_entities_id_research(id=101)
    job = c.post_export_jobs(body={"scope": "organizations.registry", "format": "jsonl"})["data"]
    c.get_export_jobs()
    c.get_export_jobs_id(id=job["id"])
    c.get_keys()
    new = c.post_keys(surfaces=["lookup"])["data"]
    c.get_keys_audit()
    rotated = c.post_keys_id_rotate(id=new["id"])["data"]
    c.delete_keys_id(id=rotated["id"], reason="test")
    latest = c.get_latest(limit=3)
    assert latest["data"] and "globalSummary" not in latest["data"][0], "the lean shape by default"
    assert "globalSummary" in c.get_latest(limit=1, legacy=True)["data"][0]
    c.get_organizations_all()
    c.get_organizations_by_organization_id(id=101)
    c.get_organizations_by_organization_name(name="Ethereum")
    c.get_organizations_id_signal_history(id=101)
    c.get_pmarket_all()
    c.get_pmarket_by_organization_id(id=101)
    c.get_radar_all(since=since)
    c.get_radar_by_category(category="funding")
    c.get_radar_by_organization_id(id=101)
    c.get_replay_global(since=since)
    c.get_search(query="Ethereum")
    c.get_signal_all(since=since)
    c.get_signal_by_category(category="funding")
    c.get_signal_by_organization_id(id=101)
    c.get_signal_latest()
    c.get_signal_top()
    c.post_stream_tickets(path="/v1/stream")
    c.get_timeline_by_organization_id(id=101)
    c.get_usage()
    stream = c.stream(organization_id=101, cursor=c.query("{ streamCursor }")["streamCursor"])
    ingest([7300001])
    assert next(stream).data["id"] == 7300001
    stream.close()
    recv = Receiver()
    try:
        hook = c.post_webhooks(body={"url": recv.url, "event_types": ["signal"]})["data"]
        c.get_webhooks()
        c.patch_webhooks_id(id=hook["id"], body={"event_types": ["radar", "signal"]})
        c.post_webhooks_id_rotate_secret(id=hook["id"])
        c.post_webhooks_id_test(id=hook["id"])
        recv.next()
        delivery = None
        for _ in range(50):
            ds = c.get_webhooks_id(id=hook["id"])["data"].get("deliveries") or []
            if ds and ds[0]["status"] == "succeeded":
                delivery = ds[0]["id"]
                break
            time.sleep(0.2)
        assert delivery, "the webhook shows no delivery"
        c.post_webhooks_id_deliveries_delivery_id_redeliver(id=hook["id"], delivery_id=delivery)
        c.delete_webhooks_id(id=hook["id"])
    finally:
        recv.close()
    sent = [(r.method, r.url.path) for r in rec.requests]
    missing = [(m, p) for (m, p, *_rest) in cryptointel.ROUTES
               if not any(sm == m and route_matches(p, sp) for sm, sp in sent)]
    assert not missing, f"routes not called: {missing}"
    meta = c.last_meta
    assert meta and meta.request_id and meta.rate_limit and meta.monthly_limit


def test_cursor_walk_three_pages():
    c, rec = recording_client()
    whole = c.get_timeline_by_organization_id(id=101, limit=100)
    want = [e["id"] for e in whole["data"]]
    assert len(want) >= 7
    rec.requests.clear()
    got = [e["id"] for e in c.paginate(c.get_timeline_by_organization_id, id=101, limit=3)]
    assert got == want, "every event once, in order"
    assert len(rec.requests) >= 3
    first = rec.requests[0].url.params
    assert "cursor" not in first
    for r in rec.requests[1:]:
        assert r.url.params.get("cursor")
        if whole.get("since") is None:  # an unbounded window: nothing to keep
            assert "since" not in r.url.params
        else:
            assert dt.datetime.fromisoformat(r.url.params["since"].replace("Z", "+00:00")) == \
                dt.datetime.fromisoformat(whole["since"].replace("Z", "+00:00"))


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413])
def test_typed_errors(status):
    kinds = {400: cryptointel.BadRequestError, 401: cryptointel.AuthenticationError,
             403: cryptointel.PermissionDeniedError, 404: cryptointel.NotFoundError,
             413: cryptointel.PayloadTooLargeError}
    c = Client(key("enterprise"), base_url=BASE)
    with pytest.raises(kinds[status]) as info:
        if status == 400:
            c.request("GET", "/v1/latest", params={"bogus": "1"})
        elif status == 401:
            Client("ci_not_a_key", base_url=BASE).get_latest()
        elif status == 403:
            Client(key("free"), base_url=BASE).get_brief(id=101, since=dt.datetime.now(dt.timezone.utc))
        elif status == 404:
            c.get_entities_by_id(id=99999999)
        else:
            c.post_webhooks(body={"url": "x" * (2 << 20)})
    e = info.value
    assert e.status_code == status and e.message and e.code and e.request_id
    assert isinstance(e, cryptointel.APIError)
    assert c.last_meta is None or c.last_meta.attempts == 1


def test_429_retried_after_retry_after():
    burner = Client(key("burn"), base_url=BASE, retry=RetryPolicy(max_retries=0))
    with pytest.raises(cryptointel.RateLimitError):
        for _ in range(200):
            burner.get_usage()
    urllib.request.urlopen(urllib.request.Request(os.environ["CRYPTOINTEL_CONTROL_URL"] + "/clock/window-end?in=3",
                                                  method="POST")).read()
    waits: list[float] = []

    def sleep(s: float) -> None:
        waits.append(s)
        time.sleep(s)

    c = Client(key("burn"), base_url=BASE, sleep=sleep)
    assert c.get_usage()["data"]
    assert c.last_meta.attempts >= 2
    assert waits and 1 <= waits[0] <= 4, waits


def ingest(ids):
    lines = "".join(json.dumps({"kind": "event", "id": i, "title": f"Streamed event {i}", "eventCategory": "funding",
                                "owners": [101], "significance": 5,
                                "evidence": [{"id": i, "content": "x", "url": f"https://example.org/{i}",
                                              "timestamp": dt.datetime.now(dt.timezone.utc).isoformat()}]}) + "\n"
                    for i in ids)
    req = urllib.request.Request(BASE + "/admin/ingest", data=lines.encode(), method="POST",
                                 headers={"Authorization": "Bearer " + os.environ["CRYPTOINTEL_ADMIN_TOKEN"]})
    urllib.request.urlopen(req).read()


class CuttingProxy:
    """A TCP proxy to the server whose connections a test can cut."""

    def __init__(self, target: str) -> None:
        host, port = target.removeprefix("http://").split(":")
        self.target = (host, int(port))
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                a, _ = self.sock.accept()
            except OSError:
                return
            b = socket.create_connection(self.target)
            with self.lock:
                self.conns += [a, b]
            for x, y in ((a, b), (b, a)):
                threading.Thread(target=self._pipe, args=(x, y), daemon=True).start()

    @staticmethod
    def _pipe(x: socket.socket, y: socket.socket) -> None:
        try:
            while data := x.recv(65536):
                y.sendall(data)
        except OSError:
            pass
        finally:
            for s in (x, y):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self) -> None:
        with self.lock:
            for s in self.conns:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            self.conns.clear()

    def close(self) -> None:
        self.cut()
        self.sock.close()


def test_stream_resumes_after_cut():
    proxy = CuttingProxy(BASE)
    try:
        c = Client(key("pro"), base_url=proxy.url, retry=RetryPolicy(base_delay=0.05))
        base = 7200000 + int(time.time()) % 1000 * 10
        cursor = c.query("{ streamCursor }")["streamCursor"]
        ingest([base + 1, base + 2, base + 3])
        got = []
        for ev in c.stream(organization_id=101, cursor=cursor):
            if ev.data["id"] < base:
                continue
            got.append(ev.data["id"])
            if len(got) == 2:
                proxy.cut()  # the connection drops after the second event
                ingest([base + 4, base + 5])
            if len(got) == 5:
                break
        assert got == [base + i for i in range(1, 6)]
    finally:
        proxy.close()


def test_webhook_verified_and_tampered_refused():
    c = Client(key("enterprise"), base_url=BASE)
    recv = Receiver()
    try:
        hook = c.post_webhooks(body={"url": recv.url, "event_types": ["signal"]})["data"]
        c.post_webhooks_id_test(id=hook["id"])
        body, headers = recv.next()
    finally:
        recv.close()
    cryptointel.verify_webhook(hook["secret"], body, headers)
    tampered = bytearray(body)
    tampered[len(tampered) // 2] ^= 1
    with pytest.raises(cryptointel.InvalidSignatureError):
        cryptointel.verify_webhook(hook["secret"], bytes(tampered), headers)
    with pytest.raises(cryptointel.InvalidSignatureError):
        cryptointel.verify_webhook(hook["secret"] + "x", body, headers)
    with pytest.raises(TypeError):
        cryptointel.verify_webhook(hook["secret"], json.loads(body), headers)


def remote_signer(domain, authorization) -> str:
    """The payer's signer: the key is held by the test server's signer (as
    a wallet or KMS would hold it)."""
    req = urllib.request.Request(os.environ["CRYPTOINTEL_CONTROL_URL"] + "/sign", method="POST",
                                 data=json.dumps({"domain": domain, "authorization": authorization}).encode(),
                                 headers={"Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(req).read())["signature"]


def test_paid_request_through_the_402_hook():
    payer = os.environ["CRYPTOINTEL_PAYER"]
    with pytest.raises(cryptointel.PaymentRequiredError):
        Client(base_url=BASE).get_entities_by_top_name(name="Ethereum")
    c = Client(base_url=BASE, payer=cryptointel.X402Payer(payer, remote_signer))
    assert c.get_entities_by_top_name(name="Ethereum")["data"]
    assert c.last_response.headers.get("payment-response"), "the payment was settled"


def test_dataframe_indexed_by_time():
    pd = pytest.importorskip("pandas")
    c = Client(key("enterprise"), base_url=BASE)
    df = cryptointel.to_pandas(c.paginate(c.get_timeline_by_organization_id, id=101, limit=5))
    assert isinstance(df.index, pd.DatetimeIndex) and str(df.index.tz) == "UTC"
    assert df.index.is_monotonic_increasing and len(df) >= 7
    hist = cryptointel.to_pandas(c.get_organizations_id_signal_history(id=101))
    assert isinstance(hist.index, pd.DatetimeIndex)


def test_graphql_query():
    c = Client(key("enterprise"), base_url=BASE)
    assert c.query("query($id: Int!) { entity(id: $id) { canonicalName } }", {"id": 101}) == \
        {"entity": {"canonicalName": "Ethereum"}}
    with pytest.raises(cryptointel.GraphQLError):
        c.query("{ nope }")
