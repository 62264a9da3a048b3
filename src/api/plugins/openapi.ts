/**
 * The machine-readable interface description: route schemas, collected by @fastify/swagger,
 * served as OpenAPI 3 at `GET /openapi.json`, with interactive documentation at
 * `/docs/openapi`. Register it before any route so every route is collected; a route hides
 * itself with `schema: {hide: true}`.
 */
import fp from "fastify-plugin";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";

export default fp(
  async (app) => {
    await app.register(swagger, {
      openapi: {
        openapi: "3.0.3",
        info: {
          title: "Writ",
          description: "Authorization service for AI agents that spend money. Error bodies are {error: string}.",
          version: "1",
        },
      },
    });
    await app.register(swaggerUi, { routePrefix: "/docs/openapi" });
    app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
  },
  { name: "writ-openapi" },
);
