#!/usr/bin/env node
// The `writ` executable. Two ways to run the same CLI (src/cli/main.ts):
//   - compiled: dist/cli/main.js, plain JavaScript built by `npm run build` (tsc). The image
//     and any install without the sources run this; it needs no loader and no dev dependency.
//   - sources: src/cli/main.ts through tsx's loader (a dev dependency), no build step. A
//     checkout runs this, so `npm start`, the tests and a developer's `writ` always run the
//     code as it is now, never a dist/ left from an older build.
// The sources win when src/cli/main.ts is here; WRIT_RUN_FROM=dist (or src) chooses explicitly.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

// `writ dev` stops cleanly on SIGINT/SIGTERM at any point: until its own handlers are installed
// (loading the CLI takes a second or more under tsx on a busy machine), a signal is recorded here
// instead of killing the process, and `writ dev` takes the first as its shutdown request
// (src/dev/shutdown.ts). Every other verb keeps Node's default.
if (process.argv[2] === "dev") {
  const early = { first: null, handler: (signal) => (early.first ??= signal) };
  process.on("SIGINT", early.handler);
  process.on("SIGTERM", early.handler);
  globalThis[Symbol.for("writ.earlySignals")] = early;
}

const SOURCE = fileURLToPath(new URL("../src/cli/main.ts", import.meta.url));
const COMPILED = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));

const from = process.env.WRIT_RUN_FROM || (existsSync(SOURCE) ? "src" : "dist");
if (from !== "src" && from !== "dist") {
  console.error(`writ: WRIT_RUN_FROM must be "src" or "dist", not "${from}"`);
  process.exit(2);
}
if (from === "dist" && !existsSync(COMPILED)) {
  console.error(`writ: ${COMPILED} is missing: run \`npm run build\` first (or WRIT_RUN_FROM=src in a checkout)`);
  process.exit(2);
}
if (from === "src") {
  let tsx;
  try {
    tsx = await import("tsx/esm/api");
  } catch (e) {
    if (e?.code !== "ERR_MODULE_NOT_FOUND") throw e;
    console.error("writ: running the TypeScript sources needs tsx (a dev dependency: `npm ci`), or build with `npm run build` and set WRIT_RUN_FROM=dist");
    process.exit(2);
  }
  tsx.register();
  await import(SOURCE);
} else {
  await import(COMPILED);
}
