/** Moved to ../shared/schema-errors.ts (shared by every route); re-exported for the routes that still import it from here. */
export * from "../shared/schema-errors.js";
