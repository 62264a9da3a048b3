/**
 * `writ keys generate`: a new signing key pair as two JWK files, `<prefix>.private.jwk.json`
 * (mode 0600) and `<prefix>.public.jwk.json`; prints the key id (`sha256:` + hex RFC 7638
 * thumbprint) on stdout, so `KID=$(writ keys generate --out p)` works. Neither file is replaced
 * without `--force`.
 */
import { generateSigner, privateJwk, type JwsAlg } from "../../core/jose/index.js";
import { usageError } from "../errors.js";
import { assertAbsent, writeFileSafely } from "../files.js";
import { required } from "../flags.js";
import { outputFormat, renderData } from "../output.js";
import { defineVerb } from "../verb.js";

const ALGS: readonly JwsAlg[] = ["EdDSA", "ES256"];

/** The two files a prefix names. */
export function keyFileNames(prefix: string): { privateFile: string; publicFile: string } {
  return { privateFile: `${prefix}.private.jwk.json`, publicFile: `${prefix}.public.jwk.json` };
}

/** `writ keys generate`. */
export const keysGenerate = defineVerb({
  name: "keys generate",
  summary: "generate a signing key pair (Ed25519 or P-256) as JWK files",
  synopsis: "--out <prefix> [--alg EdDSA|ES256] [--force] [--output text|json|yaml]",
  flags: [
    ["--out <prefix>", "writes <prefix>.private.jwk.json (mode 0600) and <prefix>.public.jwk.json"],
    ["--alg EdDSA|ES256", "EdDSA (Ed25519, the default) or ES256 (P-256)"],
    ["--force", "replace existing key files"],
    ["--output text|json|yaml", "text (default): the kid alone; json/yaml: kid, alg and both paths"],
  ],
  notes: ["Keep the private file secret: other verbs read it with --key-file; share the public file."],
  examples: ["writ keys generate --out principal", "writ keys generate --alg ES256 --out merchant --output json"],
  options: {
    out: { type: "string" },
    alg: { type: "string" },
    force: { type: "boolean" },
    output: { type: "string" },
  },
  async run(values, io) {
    const prefix = required(values.out, "out", "the file name prefix, e.g. --out principal");
    const alg = (values.alg ?? "EdDSA") as JwsAlg;
    if (!ALGS.includes(alg)) throw usageError(`--alg must be EdDSA or ES256, not ${JSON.stringify(values.alg)}`);
    const format = outputFormat(values.output, ["text", "json", "yaml"] as const, "text");
    const { privateFile, publicFile } = keyFileNames(prefix);
    const force = values.force === true;
    if (!force) {
      assertAbsent(privateFile);
      assertAbsent(publicFile);
    }
    const signer = generateSigner(alg);
    const publicJwk = { ...signer.publicJwk, kid: signer.kid, alg: signer.alg, use: "sig" };
    writeFileSafely(privateFile, `${JSON.stringify(privateJwk(signer), null, 2)}\n`, { mode: 0o600, force });
    writeFileSafely(publicFile, `${JSON.stringify(publicJwk, null, 2)}\n`, { mode: 0o644, force });
    if (format === "text") {
      io.stdout(`${signer.kid}\n`);
      io.stderr(`wrote ${privateFile} (mode 0600, keep it secret) and ${publicFile}\n`);
    } else {
      io.stdout(renderData({ kid: signer.kid, alg: signer.alg, private_key_file: privateFile, public_key_file: publicFile }, format));
    }
    return 0;
  },
});
