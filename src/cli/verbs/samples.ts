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
import { SAMPLE_WEBHOOK_URL, sampleSuffix } from "../../core/samples/index.js";
import { SAMPLE_PRINCIPAL_ID, sampleAgents, writeFreshSamples } from "../../dev/samples.js";
import { apiKey } from "../api-key.js";
import { CliError, usageError } from "../errors.js";
import { atFlag, required, serverFlag } from "../flags.js";
import { apiClient, callApi, errorText } from "../http.js";
import { outputFormat, renderData } from "../output.js";
import type { RequestBody } from "../../client/index.js";
import type { CliIo } from "../io.js";
import { defineVerb } from "../verb.js";

/** What `--register` did for one sample agent. */
interface Registered {
  agent_id: string;
  outcome: "registered" | "already registered";
}

/**
 * Registers the sample agents with the organization of the API key (POST /v1/agents, principal
 * SAMPLE_PRINCIPAL_ID, self_declared); an agent id already registered to that organization with
 * the same PUBLIC sample key is fine. Returns what happened and the organization's id.
 */
async function registerSampleAgents(io: CliIo, server: URL, key: string): Promise<{ agents: Registered[]; orgId: string }> {
  const client = apiClient(io, server, key);
  const agents: Registered[] = [];
  let orgId: string | undefined;
  for (const a of sampleAgents()) {
    const body = {
      agent_id: a.agent_id,
      principal_id: SAMPLE_PRINCIPAL_ID,
      verification_level: "self_declared" as const,
      public_key: a.public_key as RequestBody<"/v1/agents", "post">["public_key"],
    };
    const posted = await callApi(server, "/v1/agents", (init) => client.POST("/v1/agents", { body, ...init }));
    if (posted.status !== 201 && posted.status !== 409) {
      throw new CliError(
        "SERVER_ERROR",
        `POST /v1/agents (${a.agent_id}) answered ${errorText(posted)}${posted.status === 401 || posted.status === 403 ? " (check WRIT_API_KEY / --api-key-file: an agent operator's key with agents:write)" : ""}`,
      );
    }
    const got = await callApi(server, "/v1/agents/{agent_id}", (init) =>
      client.GET("/v1/agents/{agent_id}", { params: { path: { agent_id: a.agent_id } }, ...init }),
    );
    const record = got.body as { operator_org_id?: string; public_key?: Record<string, unknown>; principal_id?: string };
    if (got.status !== 200 || typeof record.operator_org_id !== "string")
      throw new CliError("SERVER_ERROR", `GET /v1/agents/${a.agent_id} answered ${errorText(got)}`);
    if (posted.status === 409 && (record.principal_id === undefined || record.public_key?.x !== a.public_key.x)) {
      throw new CliError(
        "SERVER_ERROR",
        `POST /v1/agents (${a.agent_id}) answered ${errorText(posted)}: the agent id or its PUBLIC sample key is held by another registration`,
      );
    }
    if (orgId !== undefined && orgId !== record.operator_org_id)
      throw new CliError("SERVER_ERROR", `${a.agent_id} is registered to ${record.operator_org_id}, not ${orgId}`);
    orgId = record.operator_org_id;
    agents.push({ agent_id: a.agent_id, outcome: posted.status === 201 ? "registered" : "already registered" });
  }
  if (orgId === undefined) throw new CliError("SERVER_ERROR", "no sample agent to register");
  return { agents, orgId };
}

/** `writ samples`. */
export const samplesVerb = defineVerb({
  name: "samples",
  summary: "write freshly signed sample manifests (PUBLIC sample keys) to apply",
  synopsis: "--out <dir> [--at TIME] [--webhook-url URL] [--register --server URL [--api-key-file F]] [--output text|json|yaml]",
  flags: [
    ["--out <dir>", "the folder to write (created; sample files in it are replaced)"],
    ["--webhook-url <url>", `where the sample Subscription delivers (default ${SAMPLE_WEBHOOK_URL}, the receiver writ dev runs)`],
    [
      "--register",
      `register the sample agents with the organization of WRIT_API_KEY (POST /v1/agents, principal ${SAMPLE_PRINCIPAL_ID}, self_declared) and print the namespace label that binds it`,
    ],
    ["--server <url>", "the Writ server (with --register)"],
    ["--api-key-file <file>", "the API key (with --register; default: WRIT_API_KEY)"],
    ["--at <time>", "RFC 3339 time the samples are dated and signed at (default now); the grants run from it for days"],
    ["--output text|json|yaml", "text (default): the files and what to do next; json/yaml: files, suffix and the agents to register"],
  ],
  notes: [
    "The agents the samples name (agent_procurement, agent_travel) must be registered with the organization the namespace is bound to (writ.dev/org-id), with the PUBLIC sample keys printed here: --register does it.",
    "Records are history: applying a newer rendering adds new resources; delete older ones (which revokes them) when done.",
  ],
  examples: [
    "writ samples --out samples --register --server $WRIT_SERVER && kubectl label namespace default writ.dev/org-id=$ORG_ID --overwrite && kubectl apply -f samples/",
    "writ samples --out /tmp/samples --at 2030-01-01T09:00:00Z",
  ],
  options: {
    out: { type: "string" },
    at: { type: "string" },
    "webhook-url": { type: "string" },
    register: { type: "boolean" },
    server: { type: "string" },
    "api-key-file": { type: "string" },
    output: { type: "string" },
  },
  async run(values, io) {
    const out = resolve(required(values.out, "out", "the folder to write, e.g. --out samples"));
    const at = new Date(Date.parse(atFlag(values.at, io.now()))).toISOString().replace(/\.\d+Z$/, "Z");
    const format = outputFormat(values.output, ["text", "json", "yaml"] as const, "text");
    const webhookUrl = values["webhook-url"];
    if (webhookUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(webhookUrl))
      throw usageError(`--webhook-url must be an http or https URL, not ${JSON.stringify(webhookUrl)}`);
    if (values.register !== true && (values.server !== undefined || values["api-key-file"] !== undefined))
      throw usageError("--server and --api-key-file are used with --register only");
    let registration: { agents: Registered[]; orgId: string } | undefined;
    if (values.register === true) {
      const server = serverFlag(values.server);
      registration = await registerSampleAgents(io, server, apiKey(io, values["api-key-file"], server));
    }
    const files = await writeFreshSamples(out, at, webhookUrl);
    const agents = sampleAgents();
    if (format !== "text") {
      io.stdout(
        renderData(
          { at, suffix: sampleSuffix(at), files, agents, ...(registration ? { registered: registration.agents, org_id: registration.orgId } : {}) },
          format,
        ),
      );
      return 0;
    }
    if (registration) {
      io.stdout(
        [
          `wrote ${files.length} samples dated ${at} (ids and names end in ${sampleSuffix(at)}):`,
          ...files.map((f) => `  ${f}`),
          "signed with PUBLIC sample keys: never use them for anything real.",
          ...registration.agents.map((a) => `${a.outcome}: ${a.agent_id} with organization ${registration.orgId}`),
          "bind the namespace to that organization, then apply:",
          `  kubectl label namespace default writ.dev/org-id=${registration.orgId} --overwrite`,
          `  kubectl apply -f ${values.out ?? out}/`,
          "",
        ].join("\n"),
      );
      return 0;
    }
    io.stdout(
      [
        `wrote ${files.length} samples dated ${at} (ids and names end in ${sampleSuffix(at)}):`,
        ...files.map((f) => `  ${f}`),
        "signed with PUBLIC sample keys: never use them for anything real.",
        "before applying, register the agents they name with the namespace's organization (--register does it, or POST /v1/agents):",
        ...agents.map((a) => `  ${a.agent_id}  public_key ${JSON.stringify(a.public_key)}`),
        `then: kubectl apply -f ${values.out ?? out}/`,
        "",
      ].join("\n"),
    );
    return 0;
  },
});
