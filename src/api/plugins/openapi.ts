/**
 * The machine-readable interface description: route schemas, collected by @fastify/swagger,
 * served as OpenAPI 3 at `GET /openapi.json`, with interactive documentation at
 * `/docs/openapi`. Register it before any route so every route is collected; a route hides
 * itself with `schema: {hide: true}`.
 *
 * The document adds to the schemas (./openapi-document.ts): bearer security schemes and the
 * credentials each operation accepts (Swagger UI's Authorize button then sends them), an
 * example for every request, parameter and response taken from the real demo data
 * (./openapi-examples.json), a description of every response, and the tags in order, verify
 * first.
 */
import fp from "fastify-plugin";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import { completeDocument } from "./openapi-document.js";

export default fp(
  async (app) => {
    await app.register(swagger, {
      openapi: {
        openapi: "3.0.3",
        info: {
          title: "Writ",
          description:
            "Authorization service for AI agents that spend money. Error bodies are {error: string}. " +
            "Credentials are `Authorization: Bearer <token>`: use Authorize with the credential an operation names.",
          version: "1",
        },
      },
      transformObject: (documentObject) => completeDocument("openapiObject" in documentObject ? documentObject.openapiObject : documentObject.swaggerObject),
    });
    // Try it out keeps the credentials entered with Authorize for the tab's life only.
    await app.register(swaggerUi, {
      routePrefix: "/docs/openapi",
      uiConfig: { persistAuthorization: false, tryItOutEnabled: false, displayRequestDuration: true },
    });
    app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
  },
  { name: "writ-openapi" },
);
