/**
 * `writ samples`: writes freshly signed sample manifests (two Delegations, a signed
 * IntentAgreement, a Subscription) into a folder, ready for `kubectl apply -f <folder>/` (or
 * `WRIT_MANIFESTS_DIR=<folder> writ dev`). Signed grants are short-lived by design, so static
 * files cannot stay valid: render fresh ones whenever you apply them. They are signed with the
 * PUBLIC sample keys (never use them for anything real), dated `--at` (default now), and their
 * record ids and resource names carry that time, so a later rendering never collides with what
 * an earlier one stored.
 */
import { resolve } from "node:path";
import { sampleSuffix } from "../../core/samples/index.js";
import { sampleAgents, writeFreshSamples } from "../../dev/samples.js";
import { atFlag, required } from "../flags.js";
import { outputFormat, renderData } from "../output.js";
import { defineVerb } from "../verb.js";

/** `writ samples`. */
export const samplesVerb = defineVerb({
  name: "samples",
  summary: "write freshly signed sample manifests (PUBLIC sample keys) to apply",
  synopsis: "--out <dir> [--at TIME] [--output text|json|yaml]",
  flags: [
    ["--out <dir>", "the folder to write (created; sample files in it are replaced)"],
    ["--at <time>", "RFC 3339 time the samples are dated and signed at (default now); the grants run from it for days"],
    ["--output text|json|yaml", "text (default): the files and what to do next; json/yaml: files, suffix and the agents to register"],
  ],
  notes: [
    "The agents the samples name (agent_procurement, agent_travel) must be registered with the organization the namespace is bound to (writ.dev/org-id), with the PUBLIC sample keys printed here.",
    "Records are history: applying a newer rendering adds new resources; delete older ones (which revokes them) when done.",
  ],
  examples: ["writ samples --out samples && kubectl apply -f samples/", "writ samples --out /tmp/samples --at 2030-01-01T09:00:00Z"],
  options: {
    out: { type: "string" },
    at: { type: "string" },
    output: { type: "string" },
  },
  async run(values, io) {
    const out = resolve(required(values.out, "out", "the folder to write, e.g. --out samples"));
    const at = new Date(Date.parse(atFlag(values.at, io.now()))).toISOString().replace(/\.\d+Z$/, "Z");
    const format = outputFormat(values.output, ["text", "json", "yaml"] as const, "text");
    const files = await writeFreshSamples(out, at);
    const agents = sampleAgents();
    if (format !== "text") {
      io.stdout(renderData({ at, suffix: sampleSuffix(at), files, agents }, format));
      return 0;
    }
    io.stdout(
      [
        `wrote ${files.length} samples dated ${at} (ids and names end in ${sampleSuffix(at)}):`,
        ...files.map((f) => `  ${f}`),
        "signed with PUBLIC sample keys: never use them for anything real.",
        "before applying, register the agents they name with the namespace's organization (POST /v1/agents):",
        ...agents.map((a) => `  ${a.agent_id}  public_key ${JSON.stringify(a.public_key)}`),
        `then: kubectl apply -f ${values.out ?? out}/`,
        "",
      ].join("\n"),
    );
    return 0;
  },
});
