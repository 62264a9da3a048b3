/**
 * `writ request sign`: the header fields that sign an HTTP request as an agent (RFC 9421 with
 * the Web Bot Auth parameters, src/core/httpsig): `Signature-Input`, `Signature` and
 * `Signature-Agent` (naming the key directory of --server). Offline: nothing is sent. Output `text`
 * (default) prints `Name: value` lines (for `curl -H`); `json` an object of the fields.
 */
import { DIRECTORY_PATH, signRequest } from "../../core/httpsig/index.js";
import { CliError, usageError } from "../errors.js";
import { positiveIntFlag, required, serverFlag } from "../flags.js";
import { readPrivateKeyFile } from "../files.js";
import { outputFormat } from "../output.js";
import { defineVerb } from "../verb.js";

/** Header `Name: value` pairs of a repeated `--header`. */
function headerPairs(values: readonly string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values ?? []) {
    const i = v.indexOf(":");
    if (i <= 0) throw usageError(`--header must be "Name: value", not ${JSON.stringify(v)}`);
    out[v.slice(0, i).trim().toLowerCase()] = v.slice(i + 1).trim();
  }
  return out;
}

/** `writ request sign`. */
export const requestSign = defineVerb({
  name: "request sign",
  summary: "sign an HTTP request as an agent (RFC 9421, Web Bot Auth): prints the header fields to send",
  synopsis:
    "--key-file agent.private.jwk.json --server URL --url URL [--method M] [--header 'Name: value']... [--component C]... [--lifetime S] [--output text|json]",
  flags: [
    ["--key-file <file>", "the agent's private JWK (the key it is registered with)"],
    ["--server <url>", "the Writ server whose key directory lists the agent (sent as Signature-Agent)"],
    ["--url <url>", "the absolute URL of the request to sign"],
    ["--method <m>", "the request's method (default GET)"],
    ["--header <'Name: value'>", "a header field of the request (repeatable; needed for each covered field)"],
    ["--component <c>", "a component to cover besides @authority and signature-agent (repeatable; default @method and @path)"],
    ["--lifetime <seconds>", "how long the signature lives (default 60, at most 300)"],
    ["--output text|json", "Name: value lines (default), or a JSON object"],
  ],
  notes: ["Exit status: 0 signed; 1 an unusable key file; 2 bad usage."],
  examples: [
    "writ request sign --key-file agent.private.jwk.json --server https://writ.example --url https://shop.example/cart",
    "writ request sign --key-file agent.private.jwk.json --server http://127.0.0.1:8080 --url https://shop.example/orders --method POST --output json",
  ],
  options: {
    "key-file": { type: "string" },
    server: { type: "string" },
    url: { type: "string" },
    method: { type: "string" },
    header: { type: "string", multiple: true },
    component: { type: "string", multiple: true },
    lifetime: { type: "string" },
    output: { type: "string" },
  },
  async run(values, io) {
    const signer = readPrivateKeyFile(required(values["key-file"], "key-file", "the agent's private JWK file"), io);
    const server = serverFlag(values.server);
    const url = required(values.url, "url", "the absolute URL of the request");
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
      throw usageError(`--url must be an absolute http or https URL, not ${JSON.stringify(url)}`);
    const method = (values.method ?? "GET").toUpperCase();
    if (!/^[A-Z]{1,16}$/.test(method)) throw usageError(`--method must be an HTTP method, not ${JSON.stringify(values.method)}`);
    const lifetime = values.lifetime === undefined ? undefined : positiveIntFlag(values.lifetime, "lifetime");
    if (lifetime !== undefined && lifetime > 300) throw usageError("--lifetime must be at most 300 seconds (verifiers refuse longer signatures)");
    const format = outputFormat(values.output, ["text", "json"] as const, "text");
    const headers = headerPairs(values.header);
    let fields;
    try {
      fields = await signRequest(
        { method, url, headers },
        {
          signer,
          created: io.now(),
          directoryUrl: `${server.href.replace(/\/+$/, "")}${DIRECTORY_PATH}`,
          components: values.component ?? ["@method", "@path"],
          ...(lifetime !== undefined ? { lifetimeSeconds: lifetime } : {}),
        },
      );
    } catch (e) {
      throw new CliError("INPUT_INVALID", `cannot sign the request: ${e instanceof Error ? e.message : String(e)}`);
    }
    const out = { "Signature-Input": fields["signature-input"], Signature: fields.signature, "Signature-Agent": fields["signature-agent"] ?? "" };
    io.stdout(
      format === "json"
        ? `${JSON.stringify(out, null, 2)}\n`
        : Object.entries(out)
            .map(([k, v]) => `${k}: ${v}\n`)
            .join(""),
    );
    return 0;
  },
});
