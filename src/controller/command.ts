/**
 * `writ controller`: runs the operator until SIGTERM/SIGINT (exit 0 after releasing the lease and
 * stopping cleanly). Exit 2 for unusable settings, 1 when it cannot start (database, port).
 * Settings: see ./settings.ts and docs/operator.md.
 */
import { startController } from "./manager.js";
import { settingRefusals } from "../core/env/index.js";
import { ControllerSettingsError, loadControllerSettings } from "./settings.js";

const USAGE = `usage: writ controller

Reconciles Delegation, IntentAgreement and Subscription resources (writ.dev/v1alpha1) into Postgres.
Environment: KUBECONFIG (or ~/.kube/config, or in-cluster), DATABASE_URL (required),
SVC_LOG_SIGNING_SEED (log entries of agreements), HOST/PORT (health and metrics, default 127.0.0.1:8081),
WRIT_WEBHOOK_PORT/WRIT_WEBHOOK_CERT_DIR (admission webhooks, HTTPS),
WRIT_WATCH_NAMESPACES, WRIT_LEADER_ELECTION_LEASE, WRIT_LEADER_ELECTION_NAMESPACE, POD_NAME,
WRIT_CONTROLLER_WORKERS, WRIT_CONTROLLER_RESYNC_SECONDS, WRIT_WATCH_SILENCE_SECONDS,
WRIT_CONTROLLER_QPS, WRIT_CONTROLLER_BURST, LOG_LEVEL. See docs/operator.md.`;

/** The verb: returns the exit status. */
export async function controllerCommand(args: string[]): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    console.log(USAGE);
    return 0;
  }
  if (args.length > 0) {
    console.error(`writ controller: unexpected arguments: ${args.join(" ")}\n\n${USAGE}`);
    return 2;
  }
  let settings;
  try {
    settings = loadControllerSettings();
  } catch (e) {
    if (e instanceof ControllerSettingsError) {
      console.error(`writ controller: ${e.message}`);
      return 2;
    }
    throw e;
  }
  if (settings.problems.length > 0) {
    for (const line of settingRefusals("writ controller", settings.problems)) console.error(line);
    return 2;
  }
  const handle = await startController(settings);
  const signalled = new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });
  const outcome = await Promise.race([signalled.then(() => 0), handle.done]);
  await handle.stop();
  // Everything is stopped; should anything still hold the event loop, do not hang the pod.
  setTimeout(() => process.exit(outcome), 5000).unref();
  return outcome;
}
