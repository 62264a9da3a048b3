/**
 * The load driver of `npm run bench:verify`, run as its OWN process (`node --import tsx
 * driver.ts <config.json>`), so the server under test never shares a CPU-second with its
 * client's bookkeeping. Sends `POST <path>` with a fresh body per request (a unique
 * `action_id`, agents taken round-robin), over `connections` keep-alive connections, and
 * prints one JSON line: requests, seconds, requests/s, latency quantiles (ms, sub-ms
 * resolution), statuses and the verdicts seen.
 *
 * Modes: closed loop (each connection sends its next request when the previous one answered)
 * until `seconds` pass or `maxRequests` were sent; or, with `rate`, open loop: request i is due
 * at start + i/rate and its latency counts from that moment, so a slow answer that delays
 * later requests is charged to them (no coordinated omission).
 *
 * With `warmup` N, the driver first sends N requests of the same kind to a server of its own
 * (in this process, 127.0.0.1, answering a fixed verify-sized body) and only then starts the
 * measured run and its CPU clock: every scenario is measured with a driver whose code is
 * already compiled, whether the run lasts 2 s or 10 s, and the server under test sees none of
 * the warm-up.
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { summarize } from "../stats.js";

/** What the driver is told (a JSON file). */
export interface DriverConfig {
  url: string;
  path: string;
  token?: string;
  connections: number;
  seconds: number;
  maxRequests?: number;
  /** Requests per second (open loop); absent: closed loop. */
  rate?: number;
  agents: string[];
  /** Amount of every action (major units, USD). */
  amount: number;
  /** Makes action ids unique across runs. */
  idPrefix: string;
  /** Requests sent to the driver's own server before the measured run (default 0). */
  warmup?: number;
  /** Also print every latency (ms), so that several runs can be summarised as one. */
  latencies?: boolean;
}

/** What the driver prints. */
export interface DriverResult {
  requests: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  statuses: Record<string, number>;
  verdicts: Record<string, number>;
  errors: number;
  /** CPU seconds the load generator itself used (user + system). */
  cpuSeconds: number;
  /** Every latency, ms (when asked for). */
  latencies?: number[];
}

function body(c: DriverConfig, i: number, proposedAt: string): Buffer {
  const agent = c.agents[i % c.agents.length] as string;
  return Buffer.from(
    JSON.stringify({
      agent_id: agent,
      action: { action_id: `${c.idPrefix}-${i}`, action_type: "purchase", amount: c.amount, currency: "USD", proposed_at: proposedAt, merchant: "m-bench" },
    }),
  );
}

async function run(c: DriverConfig): Promise<DriverResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: c.connections });
  const target = new URL(c.url);
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (c.token) headers.authorization = `Bearer ${c.token}`;
  const send = (payload: Buffer) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(
        { host: target.hostname, port: target.port, method: "POST", path: c.path, agent, headers: { ...headers, "content-length": String(payload.length) } },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (d: string) => (text += d));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on("error", reject);
      req.end(payload);
    });

  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const verdicts: Record<string, number> = {};
  let errors = 0;
  let issued = 0;
  const max = c.maxRequests ?? Number.POSITIVE_INFINITY;
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  const deadline = start + c.seconds * 1000;
  const interval = c.rate ? 1000 / c.rate : 0;

  const worker = async () => {
    for (;;) {
      const i = issued;
      if (i >= max) return;
      const due = c.rate ? start + i * interval : performance.now();
      if (due >= deadline) return;
      issued++;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      // The time of each request: verify refuses a proposed_at outside WRIT_PROPOSED_AT_SKEW_SECONDS.
      const payload = body(c, i, new Date().toISOString());
      const t = c.rate ? due : performance.now();
      try {
        const r = await send(payload);
        latencies.push(performance.now() - t);
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        const v = /"verdict":"([A-Z_]+)"/.exec(r.text)?.[1] ?? (r.status === 200 ? "none" : "error");
        verdicts[v] = (verdicts[v] ?? 0) + 1;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: c.connections }, worker));
  const seconds = (performance.now() - start) / 1000;
  agent.destroy();
  const cpu = process.cpuUsage(cpuStart);
  return {
    ...summarize(latencies, seconds),
    statuses,
    verdicts,
    errors,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    ...(c.latencies ? { latencies } : {}),
  };
}

/** A fixed answer about the size of a verify decision. */
const WARM_ANSWER = JSON.stringify({
  verdict: "DENY",
  svc_decision: "BLOCK",
  reasons: ["AMOUNT_ABOVE_INTENT_CEILING"],
  messages: [{ code: "AMOUNT_ABOVE_INTENT_CEILING", message: "amount 1000.00 USD is above the intent ceiling 100.00 USD" }],
  required_action: "none",
  agent_id: "agent-warmup",
  agreement_id: "agreement-warmup",
  action_id: "warmup",
});

/** Sends `n` requests to a server of this process (see the module comment). */
async function warmUp(c: DriverConfig, n: number): Promise<void> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end(WARM_ANSWER));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  try {
    const { port } = server.address() as AddressInfo;
    // Closed loop, whatever the measured run's mode.
    const { rate: _rate, ...closed } = c;
    await run({ ...closed, url: `http://127.0.0.1:${port}`, maxRequests: n, seconds: 30, idPrefix: `${c.idPrefix}-warmup` });
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

const file = process.argv[2];
if (!file) throw new Error("usage: driver.ts <config.json>");
const config = JSON.parse(readFileSync(file, "utf8")) as DriverConfig;
if (config.warmup) await warmUp(config, config.warmup);
console.log(JSON.stringify(await run(config)));
