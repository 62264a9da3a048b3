/**
 * `writ mandate inspect`: decodes and verifies an AP2 open payment mandate (an SD-JWT with a
 * key-binding JWT) offline, exactly as `POST /v1/mandates` would, and prints its claims, the
 * delegation it would become and every problem found. The claims are the verifier's own
 * resolution of the disclosures (one resolver, ../../core/mandates/sd-jwt-disclosures.ts), with
 * every digest that has no disclosure listed. The trusted issuer keys are the public
 * JWK files given (their `kid` member, else their RFC 7638 id, is what the issuer header must
 * name); without `--agent-key-file` the key in `cnf` stands in for the agent's key. Reads no
 * network. Exit 0 when it verifies, 1 when a problem is found, 2 on bad usage.
 */
import { keyId } from "../../core/jose/index.js";
import {
  DEFAULT_KB_MAX_AGE_MS,
  acceptOpenPaymentMandate,
  isConstraintObject,
  mandateDelegationId,
  verifyMandatePresentation,
  type MandateAcceptance,
  type TrustedIssuerKey,
} from "../../core/mandates/index.js";
import { readJwkFile, readPublicKeyFile } from "../files.js";
import { atFlag, required } from "../flags.js";
import { outputFormat, renderData } from "../output.js";
import { defineVerb } from "../verb.js";
import { readPresentation } from "./presentation.js";

function issuerKey(path: string): TrustedIssuerKey {
  const publicKey = readPublicKeyFile(path, "issuer-key-file");
  const own = readJwkFile(path, "--issuer-key-file").kid;
  return { kid: typeof own === "string" && own !== "" ? own : keyId(publicKey), publicKey, orgId: `file ${path}` };
}

/** `writ mandate inspect`. */
export const mandateInspect = defineVerb({
  name: "mandate inspect",
  summary: "decode and verify an AP2 payment mandate (SD-JWT) offline: claims, delegation, problems",
  synopsis: "--file F [--issuer-key-file K]... [--agent-key-file A] [--audience AUD] [--nonce N] [--at TIME] [--output text|json|yaml]",
  flags: [
    ["--file <file>", "the presentation: <issuer-jwt>~<disclosures>~<kb-jwt>"],
    ["--issuer-key-file <file>", "a trusted issuer's public JWK (repeatable); none: the issuer is reported unknown"],
    ["--agent-key-file <file>", "the registered agent's public JWK, which cnf must be (default: cnf's own key)"],
    ["--audience <aud>", "the aud the key-binding JWT must name (default: any)"],
    ["--nonce <nonce>", "the nonce the key-binding JWT must carry (default: any)"],
    ["--at <time>", "verification time (default now): key-binding freshness and exp"],
    ["--output text|json|yaml", "text (default), or everything as data"],
  ],
  notes: ["Exit status: 0 verified; 1 a problem was found; 2 bad usage."],
  examples: ["writ mandate inspect --file mandate.sd-jwt --issuer-key-file wallet.public.jwk.json --agent-key-file agent.public.jwk.json --audience writ"],
  options: {
    file: { type: "string" },
    "issuer-key-file": { type: "string", multiple: true },
    "agent-key-file": { type: "string" },
    audience: { type: "string" },
    nonce: { type: "string" },
    at: { type: "string" },
    output: { type: "string" },
  },
  async run(values, io) {
    const text = readPresentation(required(values.file, "file", "the mandate's SD-JWT file"));
    const format = outputFormat(values.output, ["text", "json", "yaml"] as const, "text");
    const issuerKeys = (values["issuer-key-file"] ?? []).map(issuerKey);
    const agentKey = values["agent-key-file"] !== undefined ? readPublicKeyFile(values["agent-key-file"], "agent-key-file") : undefined;
    const now = Date.parse(atFlag(values.at, io.now()));
    const opts = {
      issuerKeys,
      now,
      kbMaxAgeMs: DEFAULT_KB_MAX_AGE_MS,
      ...(values.audience !== undefined ? { audience: values.audience } : {}),
      ...(values.nonce !== undefined ? { nonce: values.nonce } : {}),
    };
    // The import needs the agent's key: the given one, else cnf's (then only the mapping is checked).
    const pre = agentKey ? undefined : await verifyMandatePresentation(text, opts);
    const key = agentKey ?? pre?.cnfKey;
    const principal = { type: "human" as const, id: "(the agent's principal)" };
    const a: MandateAcceptance = key
      ? await acceptOpenPaymentMandate(text, opts, { agentId: keyId(key), publicKey: key, principal })
      : { ok: false, refusals: pre?.problems ?? [], verification: pre ?? { problems: [] } };
    const v = a.verification;
    const problems = a.ok ? [] : a.refusals;
    const report = {
      verified: a.ok,
      problems,
      header: v.decoded?.header,
      claims: v.decoded?.claims,
      undisclosed: v.decoded?.undisclosed,
      key_binding: v.decoded?.kb,
      mandate_hash: v.decoded?.mandateHash,
      issuer_jwt_hash: v.decoded?.issuerJwtHash,
      delegation_id: v.decoded ? mandateDelegationId(v.decoded.mandateHash) : undefined,
      issuer: v.issuer ? { kid: v.issuer.kid, key: v.issuer.publicKey } : undefined,
      agent_key_checked: agentKey !== undefined,
      delegation: a.ok ? a.delegation : undefined,
    };
    if (format !== "text") {
      io.stdout(renderData(JSON.parse(JSON.stringify(report)) as unknown, format));
      return a.ok ? 0 : 1;
    }
    const lines: string[] = [];
    if (v.decoded) {
      lines.push(`mandate ${report.delegation_id ?? ""} (mandate hash ${v.decoded.mandateHash}, of what the issuer signed)`);
      lines.push(
        `  issuer kid ${JSON.stringify(v.decoded.header.kid)}, typ ${JSON.stringify(v.decoded.header.typ)}, alg ${JSON.stringify(v.decoded.header.alg)}${v.issuer ? ": signature verified" : ""}`,
      );
      lines.push(
        "  claims:",
        ...JSON.stringify(v.decoded.claims, null, 2)
          .split("\n")
          .map((l) => `    ${l}`),
      );
      for (const u of v.decoded.undisclosed) {
        lines.push(
          u.kind === "element"
            ? `  withheld: ${u.path} (an array element without its disclosure; refused)`
            : isConstraintObject(u.path)
              ? `  withheld: a claim of ${u.path || "the payload"} (a claim without its disclosure where constraints live; refused)`
              : `  undisclosed: a claim of ${u.path} (a decoy, or an informative claim left out; accepted)`,
        );
      }
      if (v.decoded.kb)
        lines.push(
          `  key binding: aud ${JSON.stringify(v.decoded.kb.payload.aud)}, nonce ${JSON.stringify(v.decoded.kb.payload.nonce)}, iat ${String(v.decoded.kb.payload.iat)}`,
        );
    }
    if (a.ok) {
      const d = a.delegation;
      lines.push(`verified: delegation ${d.delegation_id} from ${d.granted_at} to ${d.expires_at}, scope ${JSON.stringify(d.scope)}`);
      if (!agentKey) lines.push("  (the agent key was not checked: pass --agent-key-file)");
    } else {
      lines.push(`refused: ${problems.length} problem(s)`, ...problems.map((p) => `  ${p.code}: ${p.message}`));
    }
    io.stdout(`${lines.join("\n")}\n`);
    return a.ok ? 0 : 1;
  },
});
