/**
 * `writ log bundle`: saves the proof bundle of one entry (entry, inclusion proof, signed head,
 * key list; see ./bundle-format.ts) for `writ log verify --bundle`, offline and later. The
 * bundle is saved as fetched, whether or not it verifies: a bundle that does not verify is
 * evidence. The file is not replaced without `--force`.
 */
import { writeFileSafely } from "../files.js";
import { positiveIntFlag, required, serverFlag } from "../flags.js";
import { defineVerb } from "../verb.js";
import { fetchBundle } from "./bundle-format.js";

/** `writ log bundle`. */
export const logBundle = defineVerb({
  name: "log bundle",
  summary: "save an entry's proof bundle for offline verification",
  synopsis: "--server URL --sequence N --out file.json [--force]",
  flags: [
    ["--server <url>", "the Writ server"],
    ["--sequence <n>", "the entry's sequence (from 1)"],
    ["--out <file>", "where to write the bundle (JSON)"],
    ["--force", "replace an existing file"],
  ],
  notes: ["Exit status: 0 saved; 1 the server could not be read or the file exists; 2 bad usage."],
  examples: ["writ log bundle --server http://127.0.0.1:8080 --sequence 42 --out entry-42.json && writ log verify --bundle entry-42.json --kid sha256:0f1e..."],
  options: {
    server: { type: "string" },
    sequence: { type: "string" },
    out: { type: "string" },
    force: { type: "boolean" },
  },
  async run(values, io) {
    const server = serverFlag(values.server);
    const sequence = positiveIntFlag(required(values.sequence, "sequence", "the entry's sequence"), "sequence");
    const out = required(values.out, "out", "the bundle file to write");
    const bundle = await fetchBundle(io, server, sequence);
    writeFileSafely(out, `${JSON.stringify(bundle, null, 2)}\n`, { mode: 0o644, force: values.force === true });
    const size = (bundle.tree_head as { tree_size?: unknown }).tree_size;
    io.stderr(
      `wrote ${out}: entry ${sequence} with its inclusion proof against the signed head of ${String(size)} entries; verify it with writ log verify --bundle ${out}\n`,
    );
    return 0;
  },
});
