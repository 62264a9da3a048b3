/**
 * `writ log monitor`: follows the log's signed tree heads and checks each new one against the
 * last verified head (signature, split view, consistency proof, rollback; see
 * ./head-check.ts). The last verified head is kept in `--state` (and in memory), so a cron job
 * running `--once` checks each head against the one before. A failed check ends the monitor
 * with exit 1 and a message naming what failed; a server that cannot be reached is a warning
 * while following, and exit 1 with `--once`.
 */
import { CliError } from "../errors.js";
import { durationFlag, serverFlag } from "../flags.js";
import type { CliIo } from "../io.js";
import { outputFormat } from "../output.js";
import { defineVerb, reportFailure } from "../verb.js";
import { checkHead, type HeadCheck, type LastHead } from "./head-check.js";
import { loadState, saveState } from "./monitor-state.js";
import { keyPinFlags } from "./trust.js";

function describe(check: HeadCheck): string {
  const h = check.head;
  const o = check.outcome;
  let what = o.kind === "first" ? "first head seen" : "unchanged";
  if (o.kind === "grown") what = `consistent with the verified head of ${o.from} (${h.tree_size - o.from} new)`;
  return `ok  tree_size ${h.tree_size}  root ${h.root}  at ${h.at}  signed by ${check.kid}: ${what}`;
}

function report(io: CliIo, json: boolean, check: HeadCheck): void {
  if (json) {
    io.stdout(
      `${JSON.stringify({ ok: true, outcome: check.outcome.kind, tree_size: check.head.tree_size, root: check.head.root, at: check.head.at, kid: check.kid })}\n`,
    );
  } else {
    io.stdout(`${describe(check)}\n`);
  }
}

/** `writ log monitor`. */
export const logMonitor = defineVerb({
  name: "log monitor",
  summary: "follow the log's signed tree heads; fail on a split view, bad signature or inconsistent head",
  synopsis: "--server URL [--interval 2s] [--state file.json] [--once] [--key-file log.public.jwk.json | --kid sha256:...] [--output text|json]",
  flags: [
    ["--server <url>", "the Writ server"],
    ["--interval <duration>", "time between checks, e.g. 2s, 1m (default 2s)"],
    ["--state <file>", "keep the last verified head here (created on first run)"],
    ["--once", "check once and exit (for cron and tests)"],
    ["--key-file <file>", "pin the log's public JWK"],
    ["--kid <sha256:...>", "pin the log key by its kid"],
    ["--output text|json", "text (default) or one JSON object per line"],
  ],
  notes: [
    "Trust: unpinned, the first head's kid is remembered (trust on first use) and a head signed by another kid fails the check; pin the key to decide it yourself.",
    "Exit status: 0 checked (--once) or stopped (Ctrl-C); 1 a split view, a bad signature, an inconsistent or rolled-back head, a changed key, or (with --once) an unreachable server; 2 bad usage.",
  ],
  examples: [
    "writ log monitor --server http://127.0.0.1:8080 --state log-monitor.json --kid sha256:0f1e...",
    "*/5 * * * * writ log monitor --server https://writ.example --state /var/lib/writ/monitor.json --once",
  ],
  options: {
    server: { type: "string" },
    interval: { type: "string" },
    state: { type: "string" },
    once: { type: "boolean" },
    "key-file": { type: "string" },
    kid: { type: "string" },
    output: { type: "string" },
  },
  async run(values, io) {
    const server = serverFlag(values.server);
    const intervalMs = durationFlag(values.interval ?? "2s", "interval");
    const json = outputFormat(values.output, ["text", "json"] as const, "text") === "json";
    const pin = keyPinFlags(values["key-file"], values.kid);
    const once = values.once === true;
    const statePath = values.state;
    const stored = statePath === undefined ? undefined : loadState(statePath, server);
    let last: LastHead | undefined = stored === undefined ? undefined : { head: stored.head, kid: stored.kid };
    const signal = once ? undefined : io.signal;
    for (;;) {
      let check: HeadCheck | undefined;
      try {
        check = await checkHead(io, server, pin, last);
      } catch (e) {
        if (once || !(e instanceof CliError) || e.code === "CHECK_FAILED") return reportFailure("log monitor", e, io);
        io.stderr(`warning: ${e.message}; retrying in ${intervalMs}ms\n`);
      }
      if (check !== undefined) {
        if (once || check.outcome.kind !== "unchanged") report(io, json, check);
        last = { head: check.head, kid: check.kid };
        if (statePath !== undefined && check.outcome.kind !== "unchanged") {
          saveState(statePath, { writ_log_monitor: 1, server: server.href, kid: check.kid, head: check.head, checked_at: io.now().toISOString() });
        }
      }
      if (once) return 0;
      await io.sleep(intervalMs, signal);
      if (signal?.aborted) return 0;
    }
  },
});
