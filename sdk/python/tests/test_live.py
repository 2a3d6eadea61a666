"""Tests against a live server: tests/sdk_test.go in the service's
repository starts one, its database seeded by the demo seeder (`seed
--demo`), and runs pytest here with its address and keys in the environment
(CRYPTOINTEL_*). Without them the tests skip. The ids, names and categories
they call with are found in the demo data at run time (the ``demo``
fixture), and every test has a deadline (``deadline``), so a test fails in
seconds when what it waits for never comes."""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import http.server
import itertools
import json
import os
import queue
import signal
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


# Each test's deadline in seconds: the longest waits (a webhook delivery, the
# end of a rate window, a stream) take a few seconds.
DEADLINE = 90


@pytest.fixture(autouse=True)
def deadline():
    """Fails the running test when it outlives DEADLINE, with its stack,
    instead of letting it hold the suite."""

    def expired(signum, frame):
        raise TimeoutError(f"the test ran past its {DEADLINE} s deadline")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(DEADLINE)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@dataclasses.dataclass(frozen=True)
class Demo:
    """What the tests call with, read from the live demo data."""
    id: int  # of the owners of the newest events, the one owning the most with more than ten events
    name: str  # its canonical name
    other: int  # another owner of the newest events
    category: str  # the category of one of its events


@pytest.fixture(scope="session")
def demo() -> Demo:
    with httpx.Client(base_url=BASE, timeout=30, headers={"Authorization": "Bearer " + key("enterprise")}) as h:
        def get(path: str, **params: str):
            r = h.get(path, params=params)
            r.raise_for_status()
            return r.json()["data"]

        latest = get("/v1/latest", limit="50", legacy="false")
        owners = collections.Counter(o["id"] for ev in latest for o in ev["owners"])
        assert len(owners) >= 2, f"the newest demo events name fewer than two owners: {latest}"
        top = next((o for o, _ in owners.most_common()
                    if len((t := h.get("/v1/timeline/byOrganizationId",
                                       params={"id": str(o), "limit": "10", "legacy": "false"}).json())["data"]) == 10
                    and t["next_cursor"]), None)
        assert top is not None, f"no owner of the newest demo events has more than ten events: {owners}"
        other = next(o for o, _ in owners.most_common() if o != top)
        category = next(ev["eventCategory"] for ev in latest if any(o["id"] == top for o in ev["owners"]))
        name = get("/v1/entities/byId", id=str(top))["canonicalName"]
    return Demo(id=top, name=name, other=other, category=category)


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

    def next(self, timeout: float = 30):
        return self.deliveries.get(timeout=timeout)

    def close(self) -> None:
        self.server.shutdown()


def test_every_route(demo):
    c, rec = recording_client()
    since = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=6)
    assert c.get_brief(id=demo.id, since=since)["data"]
    c.get_brief_batch(ids=[demo.id, demo.other], since=since)
    c.get_categories_all()
    assert c.get_entities_by_id(id=demo.id)["data"]["canonicalName"] == demo.name
    c.get_entities_by_name(name=demo.name)
    c.get_entities_by_top_name(name=demo.name)
    c.get_entities_id_media(id=demo.id)
    c.get_entities_id_references(id=demo.id)
    c.get_entities_id_relationships(id=demo.id)
    c.get_entities_id_research(id=demo.id)
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
    c.get_organizations_by_organization_id(id=demo.id)
    c.get_organizations_by_organization_name(name=demo.name)
    c.get_organizations_id_signal_history(id=demo.id)
    c.get_pmarket_all()
    c.get_pmarket_by_organization_id(id=demo.id)
    c.get_radar_all(since=since)
    c.get_radar_by_category(category=demo.category)
    c.get_radar_by_organization_id(id=demo.id)
    c.get_replay_global(since=since)
    c.get_search(query=demo.name)
    c.get_signal_all(since=since)
    c.get_signal_by_category(category=demo.category)
    c.get_signal_by_organization_id(id=demo.id)
    c.get_signal_latest()
    c.get_signal_top()
    c.post_stream_tickets(path="/v1/stream")
    c.get_timeline_by_organization_id(id=demo.id)
    c.get_usage()
    stream = c.stream(organization_id=demo.id, cursor=c.query("{ streamCursor }")["streamCursor"])
    ingest(demo, [7300001])
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


def test_cursor_walk_three_pages(demo):
    c, rec = recording_client()
    # The reference: one page of nine.
    one = c.get_timeline_by_organization_id(id=demo.id, limit=9)
    want = [e["id"] for e in one["data"]]
    assert len(want) == 9 and one["next_cursor"], f"entity {demo.id} has more than 9 events"
    rec.requests.clear()
    got = [e["id"] for e in itertools.islice(c.paginate(c.get_timeline_by_organization_id, id=demo.id, limit=3), 9)]
    assert got == want, "three pages of three are the one page of nine: every event once, in order"
    assert len(rec.requests) == 3
    assert "cursor" not in rec.requests[0].url.params
    for r in rec.requests[1:]:
        assert r.url.params.get("cursor")
        if one.get("since") is None:  # an unbounded window: nothing to keep
            assert "since" not in r.url.params
        else:
            assert dt.datetime.fromisoformat(r.url.params["since"].replace("Z", "+00:00")) == \
                dt.datetime.fromisoformat(one["since"].replace("Z", "+00:00"))

    # A window ending after a few pages (from the fifth newest event on):
    # the walk stops at its null cursor with what one page of it holds.
    since = one["data"][4]["latestEvidenceTimestamp"]
    whole = c.get_timeline_by_organization_id(id=demo.id, since=since, limit=50)
    assert len(whole["data"]) >= 5 and whole["next_cursor"] is None
    rec.requests.clear()
    got = [e["id"] for e in itertools.islice(c.paginate(c.get_timeline_by_organization_id, id=demo.id, since=since,
                                                        limit=2), 51)]
    assert got == [e["id"] for e in whole["data"]]
    pages = (len(got) + 1) // 2
    assert pages <= len(rec.requests) <= pages + 1


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413])
def test_typed_errors(status, demo):
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
            Client(key("free"), base_url=BASE).get_brief(id=demo.id, since=dt.datetime.now(dt.timezone.utc))
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
                                                  method="POST"), timeout=30).read()
    waits: list[float] = []

    def sleep(s: float) -> None:
        waits.append(s)
        time.sleep(s)

    c = Client(key("burn"), base_url=BASE, sleep=sleep)
    assert c.get_usage()["data"]
    assert c.last_meta.attempts >= 2
    assert waits and 1 <= waits[0] <= 4, waits


def ingest(demo, ids):
    lines = "".join(json.dumps({"kind": "event", "id": i, "title": f"Streamed event {i}", "eventCategory": "funding",
                                "owners": [demo.id], "significance": 5,
                                "evidence": [{"id": i, "content": "x", "url": f"https://example.org/{i}",
                                              "timestamp": dt.datetime.now(dt.timezone.utc).isoformat()}]}) + "\n"
                    for i in ids)
    req = urllib.request.Request(BASE + "/admin/ingest", data=lines.encode(), method="POST",
                                 headers={"Authorization": "Bearer " + os.environ["CRYPTOINTEL_ADMIN_TOKEN"]})
    urllib.request.urlopen(req, timeout=30).read()


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


def test_stream_resumes_after_cut(demo):
    proxy = CuttingProxy(BASE)
    try:
        c = Client(key("pro"), base_url=proxy.url, retry=RetryPolicy(base_delay=0.05))
        base = 7200000 + int(time.time()) % 1000 * 10
        cursor = c.query("{ streamCursor }")["streamCursor"]
        ingest(demo, [base + 1, base + 2, base + 3])
        got = []
        for ev in c.stream(organization_id=demo.id, cursor=cursor):
            if ev.data["id"] < base:
                continue
            got.append(ev.data["id"])
            if len(got) == 2:
                proxy.cut()  # the connection drops after the second event
                ingest(demo, [base + 4, base + 5])
            if len(got) == 5:
                break
        assert got == [base + i for i in range(1, 6)]
    finally:
        proxy.close()


def test_subscription_resumes_after_cut(demo):
    proxy = CuttingProxy(BASE)
    try:
        c = Client(key("pro"), base_url=proxy.url, retry=RetryPolicy(base_delay=0.05))
        base = 7600000 + int(time.time()) % 1000 * 10
        cursor = c.query("{ streamCursor }")["streamCursor"]
        ingest(demo, [base + 1, base + 2, base + 3])
        doc = "subscription($after: String, $entityId: Int) { events(after: $after, entityId: $entityId) { id title } }"
        got = []
        for m in c.subscribe(doc, {"after": cursor, "entityId": demo.id}):
            assert m.cursor and m.data["events"]["title"]
            if m.data["events"]["id"] < base:
                continue
            got.append(m.data["events"]["id"])
            if len(got) == 2:
                proxy.cut()  # the connection drops after the second result
                ingest(demo, [base + 4, base + 5])
            if len(got) == 5:
                break
        assert got == [base + i for i in range(1, 6)]
    finally:
        proxy.close()
    with pytest.raises(cryptointel.GraphQLError):
        next(Client(key("pro"), base_url=BASE).subscribe("subscription { nope }"))


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
    return json.loads(urllib.request.urlopen(req, timeout=30).read())["signature"]


def test_paid_request_through_the_402_hook(demo):
    payer = os.environ["CRYPTOINTEL_PAYER"]
    with pytest.raises(cryptointel.PaymentRequiredError):
        Client(base_url=BASE).get_entities_by_top_name(name=demo.name)
    c = Client(base_url=BASE, payer=cryptointel.X402Payer(payer, remote_signer))
    assert c.get_entities_by_top_name(name=demo.name)["data"]
    assert c.last_response.headers.get("payment-response"), "the payment was settled"


def test_dataframe_indexed_by_time(demo):
    pd = pytest.importorskip("pandas")
    c = Client(key("enterprise"), base_url=BASE)
    df = cryptointel.to_pandas(itertools.islice(c.paginate(c.get_timeline_by_organization_id, id=demo.id, limit=5), 12))
    assert isinstance(df.index, pd.DatetimeIndex) and str(df.index.tz) == "UTC"
    assert df.index.is_monotonic_increasing and len(df) == 12
    hist = cryptointel.to_pandas(c.get_organizations_id_signal_history(id=demo.id))
    assert isinstance(hist.index, pd.DatetimeIndex) and len(hist) > 0


def test_graphql_query(demo):
    c = Client(key("enterprise"), base_url=BASE)
    assert c.query("query($id: Int!) { entity(id: $id) { canonicalName } }", {"id": demo.id}) == \
        {"entity": {"canonicalName": demo.name}}
    with pytest.raises(cryptointel.GraphQLError):
        c.query("{ nope }")
