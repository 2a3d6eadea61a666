// The client's CPU cost over a raw fetch of the same route.
//
//   BASE_URL=http://127.0.0.1:8080 KEY=ci_... npm run bench [-- N [BLOCK]]
//   (or node --expose-gc bench/bench.mjs N BLOCK after npm run build)
//
// One answer of /v1/radar/all (a page of 25 events) is taken from the live
// server, then replayed by a server in a child process (so the server's
// CPU and the rate window stay out of the measure). The measure is this
// process's own CPU (process.cpuUsage: user + system, all its threads),
// not wall time, so other load on the machine slows it without biasing
// it. N calls of each side (fetch + JSON.parse, and the client's method)
// are made in rounds of BLOCK calls (default 20): a round is one block of
// raw calls and one of library calls, in alternating order (raw first in
// even rounds, library first in odd ones), so both sides see the same
// load. With --expose-gc (npm run bench passes it) a full collection,
// not measured, precedes each block: no side is charged for the garbage
// of the other (its own scavenges are in its block). It prints the median
// over rounds of the library/raw CPU ratio as an overhead, with its
// quartiles and range. BENCH_CLOCK=thread measures the main thread's CPU
// only (less noisy, without the collector's helper threads);
// BENCH_SELF=1 measures raw against itself (the bench's own noise);
// BENCH_OPTIONS='{"timeoutMs":0}' passes client options.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Client } from "../dist/index.js";

const base = process.env.BASE_URL;
const key = process.env.KEY;
if (!base || !key) throw new Error("set BASE_URL and KEY");
const since = new Date(Date.now() - 6 * 86400_000).toISOString();
const path = `/v1/radar/all?since=${encodeURIComponent(since)}&limit=25&legacy=false`;
const n = Number(process.argv[2] ?? 3000);
const block = Number(process.argv[3] ?? 20);
const rounds = Math.max(1, Math.round(n / block));

const live = await fetch(base + path, { headers: { authorization: `Bearer ${key}` } });
if (!live.ok) throw new Error(`${live.status} ${await live.text()}`);
const body = await live.text();
const headers = Object.fromEntries([...live.headers].filter(([k]) => !["content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding"].includes(k)));

const replay = spawn(process.execPath, ["-e", `
  const http = require("node:http");
  const body = Buffer.from(process.env.BODY);
  const headers = JSON.parse(process.env.HEADERS);
  http.createServer((req, res) => { req.resume(); res.writeHead(200, headers); res.end(body); })
    .listen(0, "127.0.0.1", function () { console.log(this.address().port); });
`], { env: { ...process.env, BODY: body, HEADERS: JSON.stringify(headers) }, stdio: ["ignore", "pipe", "inherit"] });
const port = await new Promise((resolve) => replay.stdout.once("data", (d) => resolve(Number(String(d).trim()))));
const url = `http://127.0.0.1:${port}`;

const client = new Client({ baseUrl: url, apiKey: key, ...JSON.parse(process.env.BENCH_OPTIONS ?? "{}") });
const raw = async () => {
  const r = await fetch(url + path, { headers: { authorization: `Bearer ${key}` } });
  if (!r.ok) throw new Error(String(r.status));
  return r.json();
};
// BENCH_SELF=1 measures raw against itself: the bench's own bias.
const lib = process.env.BENCH_SELF ? async () => raw() : () => client.radarAll({ since, limit: 25 });

const gc = globalThis.gc;
const thread = process.env.BENCH_CLOCK === "thread";
/** threadUs is the main thread's CPU in µs (/proc/thread-self/schedstat). */
const threadUs = () => Number(readFileSync("/proc/thread-self/schedstat", "latin1").split(" ")[0]) / 1000;
/** cpu is the CPU (µs) of `count` sequential calls of fn, on a heap
 * collected before (when gc is exposed: a full collection costs a few
 * ms, more than the difference measured, so it is left out). */
const cpu = async (fn, count) => {
  gc?.();
  if (thread) {
    const t0 = threadUs();
    for (let i = 0; i < count; i++) await fn();
    return threadUs() - t0;
  }
  const start = process.cpuUsage();
  for (let i = 0; i < count; i++) await fn();
  const d = process.cpuUsage(start);
  return d.user + d.system;
};
await cpu(raw, 500);
await cpu(lib, 500);
const rawPer = [];
const libPer = [];
const ratios = [];
for (let r = 0; r < rounds; r++) {
  let rawUs, libUs;
  if (r % 2 === 0) {
    rawUs = await cpu(raw, block);
    libUs = await cpu(lib, block);
  } else {
    libUs = await cpu(lib, block);
    rawUs = await cpu(raw, block);
  }
  rawPer.push(rawUs / block);
  libPer.push(libUs / block);
  ratios.push(libUs / rawUs);
}
replay.kill();

const q = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  const i = (s.length - 1) * p;
  return s[Math.floor(i)] + (s[Math.ceil(i)] - s[Math.floor(i)]) * (i - Math.floor(i));
};
const pct = (x) => `${x >= 1 ? "+" : ""}${((x - 1) * 100).toFixed(1)}%`;
console.log(`GET /v1/radar/all (25 events, ${body.length} bytes): ${rounds} rounds of ${block} calls each side, alternating order, gc between blocks: ${gc ? "yes" : "no (run node --expose-gc)"}`);
console.log(`raw fetch + JSON.parse: ${q(rawPer, 0.5).toFixed(1)} µs CPU per call (median of rounds)`);
console.log(`client.radarAll:        ${q(libPer, 0.5).toFixed(1)} µs CPU per call (median of rounds)`);
console.log(`overhead: median ${pct(q(ratios, 0.5))}, quartiles ${pct(q(ratios, 0.25))} to ${pct(q(ratios, 0.75))}, range ${pct(q(ratios, 0))} to ${pct(q(ratios, 1))}`);
