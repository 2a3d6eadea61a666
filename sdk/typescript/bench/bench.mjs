// The client's CPU cost over a raw fetch of the same route.
//
//   BASE_URL=http://127.0.0.1:8080 KEY=ci_... npm run bench [-- ROUTE_QUERY N]
//
// One answer of /v1/radar/all (a page of 25 events) is taken from the live
// server, then replayed by a server in a child process (so the server's
// CPU and the rate window stay out of the measure); this process's CPU
// (process.cpuUsage, user + system) is measured over N calls made with
// fetch + JSON.parse and N made with the client's method, alternating
// rounds, after a warm-up. It prints both per call and the overhead.
import { spawn } from "node:child_process";
import { Client } from "../dist/index.js";

const base = process.env.BASE_URL;
const key = process.env.KEY;
if (!base || !key) throw new Error("set BASE_URL and KEY");
const since = new Date(Date.now() - 6 * 86400_000).toISOString();
const path = `/v1/radar/all?since=${encodeURIComponent(since)}&limit=25&legacy=false`;
const n = Number(process.argv[2] ?? 2000);

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
const lib = () => client.radarAll({ since, limit: 25 });

const cpu = async (fn, count) => {
  const start = process.cpuUsage();
  for (let i = 0; i < count; i++) await fn();
  const d = process.cpuUsage(start);
  return d.user + d.system;
};
await cpu(raw, 300);
await cpu(lib, 300);
let rawUs = 0;
let libUs = 0;
const rounds = 10;
for (let r = 0; r < rounds; r++) {
  rawUs += await cpu(raw, n / rounds);
  libUs += await cpu(lib, n / rounds);
}
replay.kill();
const perRaw = rawUs / n;
const perLib = libUs / n;
console.log(`GET /v1/radar/all (25 events, ${body.length} bytes), ${n} calls each`);
console.log(`raw fetch + JSON.parse: ${perRaw.toFixed(1)} µs CPU per call`);
console.log(`client.radarAll:        ${perLib.toFixed(1)} µs CPU per call`);
console.log(`overhead: ${(((perLib - perRaw) / perRaw) * 100).toFixed(1)}%`);
