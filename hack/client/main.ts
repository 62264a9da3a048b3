/**
 * `npm run gen:client`: writes src/client/schema.ts from the /openapi.json of the data plane
 * (built in this process, without a database: the document does not depend on one; the dev
 * mailbox on, so that its route is described too).
 */
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { buildApp } from "../../src/api/app.js";
import { loadSettings } from "../../src/api/settings.js";
import { CLIENT_SCHEMA_FILE, renderClientSchema } from "./render.js";

const app = buildApp(loadSettings({ LOG_LEVEL: "silent", BUR_DEV_MAILBOX: "1" }));
try {
  const doc: unknown = JSON.parse((await app.inject({ method: "GET", url: "/openapi.json" })).body);
  await writeFile(CLIENT_SCHEMA_FILE, await renderClientSchema(doc));
  console.log(`client: wrote ${fileURLToPath(CLIENT_SCHEMA_FILE)}`);
} finally {
  await app.close();
}
