/**
 * The `writ` command: `writ <verb> [args]`. Each verb's module is imported only when that verb
 * runs, so a small verb never loads the server, Postgres or the Kubernetes client.
 *
 * Extension point: add a verb to `COMMANDS` with a one-line summary and a loader returning
 * `(args) => Promise<exit status>`. The operator verbs (keys, agreement, delegation, mandate,
 * log, verify, inquire) are `run(argv, io)` functions (see ./verb.ts and ./group.ts) given the real
 * process as their `CliIo`; usage and exit statuses are documented in docs/cli.md.
 */
import type { CliIo } from "./io.js";
import { processFlags, type ProcessRun, type ProcessVerbName } from "./process-commands.js";

/** A verb's implementation: gets the arguments after the verb, returns the exit status. */
export type CommandRun = (args: string[]) => Promise<number>;

interface Command {
  summary: string;
  load: () => Promise<CommandRun>;
}

/** Adapts a `run(argv, io)` verb or group to a command running on the real process. */
function withProcessIo(load: () => Promise<{ run(argv: string[], io: CliIo): Promise<number> }>): () => Promise<CommandRun> {
  return async () => {
    const [verb, { processIo }] = await Promise.all([load(), import("./io.js")]);
    return (args) => verb.run(args, processIo());
  };
}

const COMMANDS: Readonly<Record<string, Command>> = {
  serve: {
    summary: "run the data plane (settings from the environment; migrates when DATABASE_URL is set)",
    load: processVerb("serve", async () => {
      const { serveCommand } = await import("../api/server.js");
      return ({ env }) => serveCommand(env);
    }),
  },
  dev: {
    summary: "embedded Postgres + data plane for local work (state in ./.writ)",
    load: processVerb("dev", async () => {
      // Signals are handled before the (slow) load: a SIGTERM at any point stops writ dev cleanly.
      const shutdown = (await import("../dev/shutdown.js")).devShutdownRequest();
      const { devCommand } = await import("../dev/index.js");
      return ({ env, reset }) => devCommand({ cwd: process.cwd(), env, reset, shutdown });
    }),
  },
  controller: {
    summary: "run the Kubernetes operator (KUBECONFIG or in-cluster, DATABASE_URL; leader-elected)",
    load: async () => (await import("../controller/command.js")).controllerCommand,
  },
  migrate: {
    summary: "apply pending database migrations to DATABASE_URL and exit",
    load: processVerb("migrate", () => Promise.resolve(({ env }) => migrateCommand(env))),
  },
  keys: {
    summary: "generate signing keys as JWK files",
    load: withProcessIo(async () => (await import("./keys/index.js")).keysGroup),
  },
  agreement: {
    summary: "sign, acknowledge, amend and revoke IntentAgreement manifests",
    load: withProcessIo(async () => (await import("./agreement/index.js")).agreementGroup),
  },
  delegation: {
    summary: "derive a narrower sub-delegation manifest (refuses widening)",
    load: withProcessIo(async () => (await import("./delegation/index.js")).delegationGroup),
  },
  mandate: {
    summary: "inspect (offline) and submit AP2 payment mandates (POST /v1/mandates)",
    load: withProcessIo(async () => (await import("./mandate/index.js")).mandateGroup),
  },
  approval: {
    summary: "sign the principal's decision on an approval of a STEP_UP (writ approval sign)",
    load: withProcessIo(async () => (await import("./approval/index.js")).approvalGroup),
  },
  log: {
    summary: "verify log entries (live or offline bundles), save bundles, monitor tree heads",
    load: withProcessIo(async () => (await import("./log/index.js")).logGroup),
  },
  request: {
    summary: "sign an HTTP request as an agent (RFC 9421, Web Bot Auth; offline)",
    load: withProcessIo(async () => (await import("./request/index.js")).requestGroup),
  },
  verify: {
    summary: "ask the server whether an agent may make a payment (POST /v1/verify)",
    load: withProcessIo(async () => (await import("./verbs/verify.js")).verifyVerb),
  },
  inquire: {
    summary: "purpose-coded inquiry about an agent (POST /v1/inquiries)",
    load: withProcessIo(async () => (await import("./verbs/inquire.js")).inquireVerb),
  },
  samples: {
    summary: "write freshly signed sample manifests (PUBLIC sample keys) to apply",
    load: withProcessIo(async () => (await import("./verbs/samples.js")).samplesVerb),
  },
};

/**
 * A verb that starts a process: its flags are read before its module is loaded, so `--help` and a
 * refused flag start nothing (./process-commands.ts).
 */
function processVerb(name: ProcessVerbName, load: () => Promise<(run: ProcessRun) => Promise<number>>): () => Promise<CommandRun> {
  return () =>
    Promise.resolve(async (args: string[]) => {
      const flags = processFlags(name, args, process.env);
      if ("help" in flags) {
        console.log(flags.help);
        return 0;
      }
      if ("refused" in flags) {
        console.error(flags.refused);
        return 2;
      }
      return (await load())(flags.run);
    });
}

async function migrateCommand(env: NodeJS.ProcessEnv): Promise<number> {
  const url = env.DATABASE_URL?.trim();
  if (!url) {
    console.error("writ migrate: DATABASE_URL is not set");
    return 2;
  }
  const { migrate } = await import("../store/migrate.js");
  const ran = await migrate(url, { info: (msg) => console.log(msg) });
  console.log(ran.length ? `writ migrate: applied ${ran.join(", ")}` : "writ migrate: up to date");
  return 0;
}

/** `writ <version> (node <version>)`: the package's version (package.json, two folders up from src/cli or dist/cli). */
async function versionLine(): Promise<string> {
  const { readFile } = await import("node:fs/promises");
  const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as { version?: unknown };
  return `writ ${String(pkg.version)} (node ${process.version})`;
}

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    "usage: writ <command> [args]",
    "       writ --version",
    "",
    "commands:",
    ...lines,
    "",
    "Run writ <command> --help for its flags and an example.",
  ].join("\n");
}

/** Runs the CLI with `argv` (without node and script); returns the exit status. */
export async function main(argv: string[]): Promise<number> {
  const [verb, ...args] = argv;
  if (verb === "--version" || verb === "-v" || verb === "version") {
    console.log(await versionLine());
    return 0;
  }
  if (verb === undefined || verb === "help" || verb === "--help" || verb === "-h") {
    console.log(usage());
    return verb === undefined ? 2 : 0;
  }
  const command = Object.hasOwn(COMMANDS, verb) ? COMMANDS[verb] : undefined;
  if (!command) {
    console.error(`writ: unknown command "${verb}"\n\n${usage()}`);
    return 2;
  }
  try {
    return await (
      await command.load()
    )(args);
  } catch (e) {
    console.error(`writ ${verb}: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
