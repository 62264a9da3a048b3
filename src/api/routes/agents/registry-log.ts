/** Moved to ../shared/registry-log.ts (shared by every route); re-exported for the routes that still import it from here. */
export * from "../shared/registry-log.js";
