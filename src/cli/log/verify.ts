/**
 * `writ log verify`: proves that one entry is in the transparency log, step by step (see
 * ./verify-bundle.ts), either live from a server (`--server URL --sequence N`) or offline from
 * a bundle (`--bundle file.json`, no network at all). Exit 0 when every step verifies, 1 when
 * one fails (the failing step is named) or the server cannot be read, 2 on bad usage.
 */
import { usageError } from "../errors.js";
import { readDocument } from "../files.js";
import { positiveIntFlag, serverFlag } from "../flags.js";
import { outputFormat, renderData } from "../output.js";
import { defineVerb } from "../verb.js";
import { fetchBundle, parseBundle, type LogBundle } from "./bundle-format.js";
import { keyPinFlags } from "./trust.js";
import { verifyBundle, type VerifyReport } from "./verify-bundle.js";

/** Text form of a report. */
export function renderReport(report: VerifyReport, origin: string): string {
  const lines = [`entry ${report.sequence} of ${origin}:`];
  for (const s of report.steps) lines.push(`  ${s.ok ? "ok  " : "FAIL"}  ${s.step.padEnd(9)}  ${s.detail}`);
  const h = report.tree_head;
  lines.push(
    report.verified && h
      ? `verified: entry ${report.sequence} is in the log whose head of ${h.tree_size} entries (${h.at}) is signed by ${h.kid}${h.pinned ? " (pinned)" : " (unpinned: trusts the key list)"}`
      : `NOT verified: the ${report.steps.at(-1)?.step ?? "first"} step failed`,
  );
  return `${lines.join("\n")}\n`;
}

/** `writ log verify`. */
export const logVerify = defineVerb({
  name: "log verify",
  summary: "verify that an entry is in the transparency log (live or from an offline bundle)",
  synopsis: "(--server URL --sequence N | --bundle file.json) [--key-file log.public.jwk.json | --kid sha256:...] [--output text|json|yaml]",
  flags: [
    ["--server <url>", "the Writ server to fetch the entry, its proof, the signed head and the key list from"],
    ["--sequence <n>", "the entry's sequence (from 1)"],
    ["--bundle <file>", "verify a bundle saved by writ log bundle instead: no network at all"],
    ["--key-file <file>", "pin the log's public JWK: the head must be signed by exactly this key"],
    ["--kid <sha256:...>", "pin the log key by its kid (RFC 7638 thumbprint, hex)"],
    ["--output text|json|yaml", "text (default): one line per step; json/yaml: the report"],
  ],
  notes: [
    "Trust: without a pin the head's key is looked up by kid in the key list that came with it (the server's /.well-known/svc-keys.json, or the copy in the bundle): that proves the head was signed by a key the server (or the bundle's author) publishes, not that it is the log's key. Pin the key (--key-file or --kid, obtained once out of band) to remove that trust.",
    "Exit status: 0 verified; 1 a step failed or the server could not be read; 2 bad usage.",
  ],
  examples: [
    "writ log verify --server http://127.0.0.1:8080 --sequence 42 --kid sha256:0f1e...",
    "writ log verify --bundle entry-42.json --key-file log.public.jwk.json",
  ],
  options: {
    server: { type: "string" },
    sequence: { type: "string" },
    bundle: { type: "string" },
    "key-file": { type: "string" },
    kid: { type: "string" },
    output: { type: "string" },
  },
  async run(values, io) {
    const format = outputFormat(values.output, ["text", "json", "yaml"] as const, "text");
    const pin = keyPinFlags(values["key-file"], values.kid);
    let bundle: LogBundle;
    let origin: string;
    let listSource: string;
    if (values.bundle !== undefined) {
      if (values.server !== undefined || values.sequence !== undefined) throw usageError("--bundle verifies offline: leave out --server and --sequence");
      bundle = parseBundle(readDocument(values.bundle, "--bundle"), values.bundle);
      origin = `bundle ${values.bundle}`;
      listSource = "the bundle's key list";
    } else {
      if (values.server === undefined && values.sequence === undefined) throw usageError("pass --server URL --sequence N, or --bundle file.json");
      const server = serverFlag(values.server);
      if (values.sequence === undefined) throw usageError("--sequence is required with --server");
      const sequence = positiveIntFlag(values.sequence, "sequence");
      bundle = await fetchBundle(io, server, sequence);
      origin = server.href;
      listSource = "the server's key list";
    }
    const report = await verifyBundle(bundle, pin, listSource);
    io.stdout(format === "text" ? renderReport(report, origin) : renderData(report, format));
    return report.verified ? 0 : 1;
  },
});
