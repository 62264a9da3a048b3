/**
 * The flags of the verbs that start a process (`writ serve`, `writ dev`, `writ migrate`), parsed
 * strictly before anything starts: `--help` prints the usage and starts nothing, every other flag
 * either works or is refused (exit 2). `--port` and `--host` are the same settings as PORT and
 * HOST (a flag wins over the environment); `writ dev --reset` starts from an empty workspace.
 */
import { parseArgs } from "node:util";

/** A process verb once its flags are read: the environment it runs with, and its own flags. */
export interface ProcessRun {
  env: NodeJS.ProcessEnv;
  reset: boolean;
}

interface ProcessVerb {
  usage: string;
  port: boolean;
  reset: boolean;
}

const ENVIRONMENT = "Settings come from the environment (every one: docs/reference/settings.md); PORT, HOST and DATABASE_URL are the common ones.";

export const PROCESS_VERBS = {
  serve: {
    usage: [
      "usage: writ serve [--port N] [--host ADDRESS]",
      "",
      "Runs the data plane (the /v1 API, the portal, /metrics). With DATABASE_URL set it applies",
      "pending migrations at start; without it, storage routes answer 503.",
      "",
      "  --port N          listen on port N (default PORT, else 8080)",
      "  --host ADDRESS    listen on ADDRESS (default HOST, else 127.0.0.1)",
      "",
      ENVIRONMENT,
      "Example: DATABASE_URL=postgres://writ@127.0.0.1/writ writ serve --port 9000",
    ].join("\n"),
    port: true,
    reset: false,
  },
  dev: {
    usage: [
      "usage: writ dev [--port N] [--host ADDRESS] [--reset]",
      "",
      "Runs an embedded Postgres (data in ./.writ), the data plane and the manifest folder",
      "(.writ/samples, WRIT_MANIFESTS_DIR) in one process; prints the URL and the dev secrets.",
      "",
      "  --port N          serve on port N (default PORT, else 8080)",
      "  --host ADDRESS    serve on ADDRESS (default HOST, else 127.0.0.1)",
      "  --reset           remove ./.writ first (database, secrets, samples) and start afresh",
      "",
      ENVIRONMENT,
      "Example: npm start -- --reset",
    ].join("\n"),
    port: true,
    reset: true,
  },
  migrate: {
    usage: [
      "usage: writ migrate",
      "",
      "Applies pending database migrations to DATABASE_URL and exits.",
      "",
      "Example: DATABASE_URL=postgres://writ@127.0.0.1/writ writ migrate",
    ].join("\n"),
    port: false,
    reset: false,
  },
} as const satisfies Record<string, ProcessVerb>;

export type ProcessVerbName = keyof typeof PROCESS_VERBS;

/** What the flags say: print the usage (exit 0), refuse them (exit 2), or run. */
export type ProcessFlags = { help: string } | { refused: string } | { run: ProcessRun };

/** Reads the flags of process verb `name` given `args`, over environment `env`. */
export function processFlags(name: ProcessVerbName, args: string[], env: NodeJS.ProcessEnv): ProcessFlags {
  const verb: ProcessVerb = PROCESS_VERBS[name];
  let values: { help?: boolean; port?: string; host?: string; reset?: boolean };
  try {
    values = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: "boolean", short: "h" },
        ...(verb.port ? { port: { type: "string" }, host: { type: "string" } } : {}),
        ...(verb.reset ? { reset: { type: "boolean" } } : {}),
      },
    }).values as typeof values;
  } catch (e) {
    return { refused: `writ ${name}: ${e instanceof Error ? e.message : String(e)}\n\n${verb.usage}` };
  }
  if (values.help) return { help: verb.usage };
  const overrides: NodeJS.ProcessEnv = {};
  if (values.port !== undefined) {
    if (!/^[0-9]{1,5}$/.test(values.port) || Number(values.port) < 1 || Number(values.port) > 65535) {
      return { refused: `writ ${name}: --port must be a port number from 1 to 65535, not ${JSON.stringify(values.port)}` };
    }
    overrides.PORT = values.port;
  }
  if (values.host !== undefined) {
    if (values.host.trim() === "") return { refused: `writ ${name}: --host must name an address, such as 127.0.0.1` };
    overrides.HOST = values.host;
  }
  return { run: { env: { ...env, ...overrides }, reset: values.reset === true } };
}
