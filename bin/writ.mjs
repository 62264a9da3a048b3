#!/usr/bin/env node
// The `writ` executable: runs the TypeScript CLI through tsx's loader, so no build step is needed.
import { register } from "tsx/esm/api";
import { fileURLToPath } from "node:url";

register();
const main = fileURLToPath(new URL("../src/cli/main.ts", import.meta.url));
await import(main);
