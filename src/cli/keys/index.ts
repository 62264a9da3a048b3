/** `writ keys`: signing keys as JWK files. */
import { defineGroup } from "../group.js";
import { keysGenerate } from "./generate.js";

/** The `writ keys` group. */
export const keysGroup = defineGroup("keys", "signing keys as JWK files", [keysGenerate]);
