/**
 * The hostile senders of `npm run bench:hostile-bodies`, run as their OWN process (`node
 * --import tsx senders.ts <url> <senders> <seconds> <maxRequests>`): `senders` loops, each
 * posting, one after another, unauthenticated bodies to `/demo/check` on 127.0.0.1, cycling
 * through three kinds: (1) 1 MiB of nested arrays with its content-length (the body),
 * (2) the same streamed chunked (no length: the server must read it to refuse it), (3) the
 * costliest body the bounds let through (999 empty arrays, depth 2, padded with numbers to
 * just under the 64 KiB limit).
 * Stops after `seconds` or `maxRequests` in all, or at SIGTERM; prints `{sent, statuses}` as JSON.
 */
import http from "node:http";

const [url = "", sendersArg = "6", secondsArg = "10", maxArg = "100000"] = process.argv.slice(2);
const target = new URL("/demo/check", url);
if (target.hostname !== "127.0.0.1") throw new Error("hostile senders only talk to 127.0.0.1");
const deadline = Date.now() + Number(secondsArg) * 1000;
const max = Number(maxArg);
const nested = Buffer.from(`${"[".repeat(512 * 1024)}${"]".repeat(512 * 1024)}`);
const flat = Buffer.from(`[${Array.from({ length: 999 }, () => "[]").join(",")},${Array.from({ length: 30_000 }, () => "0").join(",")}]`);
const agent = new http.Agent({ keepAlive: true, maxSockets: Number(sendersArg) });
let sent = 0;
const statuses: Record<string, number> = {};
// Stopped early (SIGTERM): the tally so far.
process.once("SIGTERM", () => {
  process.stdout.write(JSON.stringify({ sent, statuses }), () => process.exit(0));
});

function post(kind: number): Promise<void> {
  return new Promise((resolve) => {
    const body = kind === 2 ? flat : nested;
    const headers: Record<string, string | number> = { "content-type": "application/json" };
    if (kind !== 1) headers["content-length"] = body.length;
    const req = http.request(target, { method: "POST", agent, headers }, (res) => {
      statuses[String(res.statusCode)] = (statuses[String(res.statusCode)] ?? 0) + 1;
      res.resume();
      res.on("end", resolve);
      res.on("error", () => resolve());
    });
    req.on("error", (e) => {
      statuses[e.message.slice(0, 40)] = (statuses[e.message.slice(0, 40)] ?? 0) + 1;
      resolve();
    });
    if (kind === 1) {
      // Chunked, 64 KiB at a time.
      for (let at = 0; at < body.length; at += 65_536) req.write(body.subarray(at, at + 65_536));
      req.end();
    } else req.end(body);
  });
}

await Promise.all(
  Array.from({ length: Number(sendersArg) }, async (_, s) => {
    for (let i = s; Date.now() < deadline && sent < max; i++) {
      sent += 1;
      await post(i % 3);
    }
  }),
);
agent.destroy();
process.stdout.write(JSON.stringify({ sent, statuses }));
