/**
 * The baseline server of `npm run bench:verify`: a bare Fastify app in its own process, with
 * the data plane's logger settings (level from LOG_LEVEL, pino to stdout) and body limit, that
 * answers `POST /v1/verify` with the parsed JSON body it received. No schema, no hooks, no
 * storage: what any JSON-over-HTTP endpoint on this stack costs at least. Listens on
 * 127.0.0.1:PORT; SIGTERM closes it.
 */
import Fastify from "fastify";
import { BODY_LIMIT } from "../../../src/api/app.js";

const app = Fastify({ logger: { level: process.env.LOG_LEVEL ?? "info" }, bodyLimit: BODY_LIMIT });
app.post("/v1/verify", async (request) => request.body);
await app.listen({ host: "127.0.0.1", port: Number(process.env.PORT ?? 0) });
process.once("SIGTERM", () => void app.close().then(() => process.exit(0)));
