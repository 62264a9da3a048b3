/**
 * `GET /.well-known/svc-keys.json`: the log public key (with its checkpoint origin and signed-note
 * verifier key) plus the records of SVC_PUBLISHED_KEYS, answered from the list the keys plugin
 * computed at start-up (see src/api/plugins/keys.ts).
 */
import type { FastifyPluginAsync } from "fastify";
import { ERROR_BODY_SCHEMA } from "../../errors.js";
import { keyListOptions } from "../shared/key-list.js";

const jwkSchema = {
  type: "object",
  required: ["kty", "crv", "x", "kid"],
  properties: {
    kty: { type: "string" },
    crv: { type: "string" },
    x: { type: "string" },
    y: { type: "string" },
    kid: { type: "string", description: "sha256: + hex RFC 7638 thumbprint" },
  },
} as const;

const keysRoutes: FastifyPluginAsync = async (app) => {
  app.get(
    "/.well-known/svc-keys.json",
    keyListOptions({
      tags: ["keys"],
      summary: "Log public key and published institution keys",
      item: {
        type: "object",
        required: ["public_key"],
        properties: {
          public_key: jwkSchema,
          checkpoint_origin: { type: "string", description: "The log key only: the origin line of its C2SP checkpoints (WRIT_LOG_ORIGIN)" },
          note_verifier_key: {
            type: "string",
            description:
              "The log key only: its signed-note verifier key, <origin>+<8 hex digits key ID>+<base64 of 0x01 and the Ed25519 key> (golang.org/x/mod/sumdb/note)",
          },
        },
        additionalProperties: true,
      },
      errors: { 500: ERROR_BODY_SCHEMA },
    }),
    async (_request, reply) => reply.code(app.keyList.status).send(app.keyList.body),
  );
};

export default keysRoutes;
