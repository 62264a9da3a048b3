/**
 * The route options of the service's two public key lists (`GET /.well-known/svc-keys.json`,
 * `GET /.well-known/http-message-signatures-directory`): a `{keys: [...]}` answer whose items
 * each route describes, with its error answers.
 */

/** What a key list route says of itself. */
export interface KeyListDoc<E extends Record<number, unknown>> {
  tags: string[];
  summary: string;
  description?: string;
  /** The schema of one key. */
  item: Record<string, unknown>;
  /** The error answers, by status. */
  errors: E;
}

/** The options of a key list route. */
export function keyListOptions<E extends Record<number, unknown>>(d: KeyListDoc<E>) {
  return {
    schema: {
      tags: d.tags,
      summary: d.summary,
      ...(d.description !== undefined ? { description: d.description } : {}),
      response: {
        200: { type: "object", required: ["keys"], properties: { keys: { type: "array", items: d.item } } },
        ...d.errors,
      },
    },
  } as const;
}
