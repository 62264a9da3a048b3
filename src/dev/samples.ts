/**
 * Fresh sample manifests on disk: `writ samples --out <dir>` and `writ dev`'s `.writ/samples/`
 * (rendered once per workspace). They are signed at `at` with the PUBLIC sample keys, their ids
 * and names carry `at` (src/core/samples), so they are Ready when applied while their grants last
 * (seven days for the root Delegation, four for the chained one).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { sampleSigner } from "../core/samples/index.js";
import { renderSamples } from "../manifests/index.js";

/** The principal id the sample agents are registered with (`writ samples --register`). */
export const SAMPLE_PRINCIPAL_ID = "prn_acme";

/** The sample agents and their PUBLIC keys (to register them with the namespace's organization). */
export function sampleAgents(): { agent_id: string; public_key: Record<string, string> }[] {
  return [
    { agent_id: "agent_procurement", public_key: { ...sampleSigner("procurementAgent").publicJwk } },
    { agent_id: "agent_travel", public_key: { ...sampleSigner("travelAgent").publicJwk } },
  ];
}

/** Writes the samples dated `at` (RFC 3339, whole seconds) into `dir` (created), the Subscription delivering to `webhookUrl`; the paths written. */
export async function writeFreshSamples(dir: string, at: string, webhookUrl?: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const f of await renderSamples(at, { dated: true, ...(webhookUrl !== undefined ? { webhookUrl } : {}) })) {
    const path = join(dir, f.name);
    await writeFile(path, f.content);
    written.push(path);
  }
  return written;
}
