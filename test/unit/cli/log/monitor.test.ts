/**
 * `writ log monitor` against a tiny local server that serves crafted heads signed with a test
 * key: growth with a valid consistency proof passes; a split view (same size, other root), an
 * inconsistent head (its consistency proof does not verify), a head with a bad signature, a
 * rolled-back head and a changed key each end the monitor with exit 1 and a clear message.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { logGroup } from "../../../../src/cli/log/index.js";
import { generateSigner, type Signer } from "../../../../src/core/jose/index.js";
import type { TreeHead } from "../../../../src/core/tlog/index.js";
import { runVerb } from "../capture.js";
import { tempDir } from "../fixtures.js";
import { FakeLog, keyListOf } from "./fake-log.js";

interface Serving {
  head: TreeHead | null;
  keys: unknown;
  consistency: (first: number, second: number) => unknown;
}

let server: Server;
let base = "";
let serving: Serving;
let logKey: Signer;
let log: FakeLog;
let other: FakeLog;
const dir = tempDir("writ-monitor-");
let requests: string[] = [];

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

beforeAll(async () => {
  logKey = generateSigner();
  log = new FakeLog(logKey, 5);
  other = new FakeLog(logKey, 0);
  other.entries.push(...log.entries.slice(0, 2));
  other.append(6, "forked"); // same first two entries, then a different history
  server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    requests.push(url.pathname + url.search);
    if (url.pathname === "/v1/log/head")
      return serving.head ? send(res, 200, serving.head) : send(res, 404, { error: "the transparency log has no signed tree head" });
    if (url.pathname === "/.well-known/svc-keys.json") return send(res, 200, serving.keys);
    if (url.pathname === "/v1/log/consistency")
      return send(res, 200, serving.consistency(Number(url.searchParams.get("first")), Number(url.searchParams.get("second"))));
    return send(res, 404, { error: "not found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  requests = [];
  serving = { head: null, keys: keyListOf(logKey), consistency: (a, b) => log.consistency(a, b) };
});

function monitor(...extra: string[]) {
  return runVerb(logGroup, ["monitor", "--server", base, "--once", ...extra]);
}

async function firstState(size: number): Promise<string> {
  const state = join(dir, `state-${Math.random().toString(36).slice(2)}.json`);
  serving.head = await log.head(size);
  const r = await monitor("--state", state);
  expect(r.code).toBe(0);
  expect(r.out).toContain("first head seen");
  return state;
}

describe("writ log monitor", () => {
  it("records the first head, then accepts a grown head whose consistency proof verifies", async () => {
    const small = new FakeLog(logKey, 3);
    const state = join(dir, "grow.json");
    serving.head = await small.head(3);
    let r = await monitor("--state", state, "--kid", logKey.kid);
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(state, "utf8"))).toMatchObject({ writ_log_monitor: 1, server: `${base}/`, kid: logKey.kid, head: { tree_size: 3 } });
    small.append(4);
    serving.head = await small.head(7, "2026-03-01T10:05:00Z");
    serving.consistency = (a, b) => small.consistency(a, b);
    r = await monitor("--state", state, "--kid", logKey.kid);
    expect(r.code).toBe(0);
    expect(r.out).toContain("tree_size 7");
    expect(r.out).toContain("consistent with the verified head of 3 (4 new)");
    expect(requests).toContain("/v1/log/consistency?first=3&second=7");
    expect(JSON.parse(readFileSync(state, "utf8")).head.tree_size).toBe(7);
    r = await monitor("--state", state, "--output", "json");
    expect(JSON.parse(r.out)).toMatchObject({ ok: true, outcome: "unchanged", tree_size: 7, kid: logKey.kid });
  });

  it("catches a split view: a second signed head of the same size with another root", async () => {
    const state = await firstState(5);
    serving.head = await other.head(5);
    const r = await monitor("--state", state);
    expect(r.code).toBe(1);
    expect(r.err).toContain("split view: two signed heads of size 5 with different roots");
    expect(r.err).toContain(`${(await log.head(5)).root}`);
    expect(r.err).toContain(`${(await other.head(5)).root}`);
    expect(r.err).toContain("evidence (both heads are signed by the log key)");
    expect(JSON.parse(readFileSync(state, "utf8")).head.root).toBe((await log.head(5)).root);
  });

  it("catches an inconsistent head: its consistency proof does not verify", async () => {
    const state = await firstState(5);
    serving.head = await other.head(8);
    serving.consistency = (a, b) => other.consistency(a, b);
    const r = await monitor("--state", state);
    expect(r.code).toBe(1);
    expect(r.err).toContain("inconsistent: the head of size 8");
    expect(r.err).toContain("does not extend the verified head of size 5");
    expect(r.err).toContain("consistency proof does not lead to the first root");
  });

  it("catches a consistency proof with a changed hash even when the new head is genuine", async () => {
    const state = await firstState(3);
    serving.head = await log.head(5);
    serving.consistency = (a, b) => {
      const p = log.consistency(a, b);
      const h = p.proof[0] as string;
      return { ...p, proof: [`${h.slice(0, -1)}${h.endsWith("0") ? "1" : "0"}`, ...p.proof.slice(1)] };
    };
    const r = await monitor("--state", state);
    expect(r.code).toBe(1);
    expect(r.err).toContain("inconsistent");
  });

  it("catches a bad signature: a head signed by a key the list does not name, or altered after signing", async () => {
    const mallory = generateSigner();
    serving.head = await log.head(5, "2026-03-01T10:00:00Z", mallory);
    let r = await monitor();
    expect(r.code).toBe(1);
    expect(r.err).toContain(`holds no key with kid ${mallory.kid}`);
    const altered = { ...(await log.head(5)), tree_size: 6 };
    serving.head = altered;
    r = await monitor();
    expect(r.code).toBe(1);
    expect(r.err).toContain(`the tree head's signature does not verify with ${logKey.kid}`);
    serving.head = await log.head(5, "2026-03-01T10:00:00Z", mallory);
    serving.keys = keyListOf(mallory);
    r = await monitor("--kid", logKey.kid);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`holds no key with the pinned kid ${logKey.kid}`);
  });

  it("catches a rollback and a changed key (trust on first use)", async () => {
    const state = await firstState(5);
    serving.head = await log.head(4);
    let r = await monitor("--state", state);
    expect(r.code).toBe(1);
    expect(r.err).toContain("rollback: the signed head has 4 entries, fewer than the 5 already verified");
    const rotated = generateSigner();
    serving.head = await log.head(5, "2026-03-01T10:00:00Z", rotated);
    serving.keys = keyListOf(logKey, rotated);
    r = await monitor("--state", state);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`the log key changed from ${logKey.kid} to ${rotated.kid}`);
    r = await monitor("--state", state, "--kid", rotated.kid);
    expect(r.code).toBe(0);
  });

  it("--once exits 1 when the server cannot be reached; a state of another server is refused", async () => {
    let r = await runVerb(logGroup, ["monitor", "--server", "http://127.0.0.1:1", "--once"]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("cannot reach");
    const state = await firstState(5);
    r = await runVerb(logGroup, ["monitor", "--server", "http://127.0.0.1:2", "--once", "--state", state]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`belongs to ${base}/`);
    writeFileSync(state, "nope");
    r = await monitor("--state", state);
    expect(r.code).toBe(1);
    expect(r.err).toContain("is not JSON; move it away to start over");
  });

  it("follows heads until stopped, printing each new head and retrying after a server error", async () => {
    const growing = new FakeLog(logKey, 2);
    const controller = new AbortController();
    let sleeps = 0;
    serving.head = null;
    serving.consistency = (a, b) => growing.consistency(a, b);
    const r = await runVerb(logGroup, ["monitor", "--server", base, "--interval", "1s"], {
      signal: controller.signal,
      sleep: async (ms) => {
        expect(ms).toBe(1000);
        sleeps++;
        if (sleeps === 1) serving.head = await growing.head(2);
        if (sleeps === 2) serving.head = await growing.head(2);
        if (sleeps === 3) {
          growing.append(3);
          serving.head = await growing.head(5);
        }
        if (sleeps === 4) controller.abort();
      },
    });
    expect(r.code).toBe(0);
    expect(r.err).toContain("warning: GET /v1/log/head answered 404 the transparency log has no signed tree head; retrying in 1000ms");
    const lines = r.out.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain("first head seen");
    expect(lines[1]).toContain("consistent with the verified head of 2 (3 new)");
  });

  it("bad usage exits 2: no server, a bad interval", async () => {
    expect((await runVerb(logGroup, ["monitor", "--once"])).code).toBe(2);
    const r = await runVerb(logGroup, ["monitor", "--server", base, "--interval", "fast"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("--interval must be a duration");
  });
});
