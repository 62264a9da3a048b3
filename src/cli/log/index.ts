/** `writ log`: verify entries of the transparency log, save proof bundles, follow tree heads. */
import { defineGroup } from "../group.js";
import { logBundle } from "./bundle.js";
import { logMonitor } from "./monitor.js";
import { logVerify } from "./verify.js";

/** The `writ log` group. */
export const logGroup = defineGroup("log", "verify log entries, save proof bundles, follow tree heads", [logVerify, logBundle, logMonitor]);
