/**
 * One verb: its flags (parsed strictly with `node:util` parseArgs), its help text with an
 * example, and the uniform handling of `--help`, bad usage and failures.
 *
 * Promises: `--help` (or `-h`) anywhere prints the help and exits 0; an unknown flag, a missing
 * value or a positional argument exits 2 naming it and pointing at `--help`; a flag that would
 * put a secret into shell history (`--token`, `--api-key`, `--password`, ...) is refused with
 * exit 2 and the file or environment variable to use instead; a `CliError` ends the run with
 * its message and exit status; any other exception exits 1 with its message.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { CliError, EXIT_FAILED, EXIT_OK, EXIT_USAGE } from "./errors.js";
import type { CliIo } from "./io.js";

/** The option table a verb declares (as `parseArgs` takes it). */
export type VerbOptions = NonNullable<ParseArgsConfig["options"]>;

/** The parsed flag values of a verb with options `O`. */
export type VerbValues<O extends VerbOptions> = ReturnType<typeof parseArgs<{ options: O; strict: true; allowPositionals: false; args: string[] }>>["values"];

/** A verb: what it is, how to call it, and what it does. */
export interface VerbSpec<O extends VerbOptions> {
  /** Full name after `writ`, e.g. `log verify`. */
  name: string;
  /** One line. */
  summary: string;
  /** The synopsis after `usage: writ <name> `. */
  synopsis: string;
  /** `[flag, description]` rows of the help. */
  flags: ReadonlyArray<readonly [string, string]>;
  /** At least one example command line. */
  examples: readonly string[];
  /** Further paragraphs (exit statuses, trust model). */
  notes?: readonly string[];
  options: O;
  run(values: VerbValues<O>, io: CliIo): Promise<number>;
}

/** A runnable verb: `run(argv, io)` returns the exit status. */
export interface Verb {
  readonly name: string;
  readonly summary: string;
  run(argv: string[], io: CliIo): Promise<number>;
  help(): string;
}

/** Flags that would carry a secret on the command line, and where the secret belongs instead. */
const SECRET_FLAGS: Readonly<Record<string, string>> = {
  token: "a file or an environment variable (for an API key: WRIT_API_KEY or --api-key-file)",
  "api-key": "WRIT_API_KEY or --api-key-file",
  apikey: "WRIT_API_KEY or --api-key-file",
  password: "a file or an environment variable",
  secret: "a file or an environment variable",
  key: "--key-file (a private JWK file written by `writ keys generate`)",
  "private-key": "--key-file (a private JWK file written by `writ keys generate`)",
  seed: "a file or an environment variable",
  bearer: "WRIT_API_KEY or --api-key-file",
};

function refuseSecretFlags(argv: readonly string[]): void {
  for (const arg of argv) {
    if (arg === "--") return;
    if (!arg.startsWith("--")) continue;
    const name = arg.slice(2).split("=")[0] ?? "";
    const instead = Object.hasOwn(SECRET_FLAGS, name) ? SECRET_FLAGS[name] : undefined;
    if (instead !== undefined) {
      throw new CliError("SECRET_IN_ARGUMENT", `--${name} is refused: secrets passed as arguments land in shell history and process lists; use ${instead}`);
    }
  }
}

/** `text` wrapped at `width` columns on spaces. */
function wrap(text: string, width = 96): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  if (line !== "") lines.push(line);
  return lines;
}

/** Renders the help of a verb. */
export function renderHelp<O extends VerbOptions>(spec: VerbSpec<O>): string {
  const width = Math.max(0, ...spec.flags.map(([f]) => f.length));
  const lines = [`writ ${spec.name}: ${spec.summary}`, "", `usage: writ ${spec.name} ${spec.synopsis}`, ""];
  if (spec.flags.length > 0) {
    lines.push("flags:");
    for (const [flag, text] of spec.flags) lines.push(`  ${flag.padEnd(width)}  ${text}`);
    lines.push(`  ${"-h, --help".padEnd(width)}  this help`, "");
  }
  for (const note of spec.notes ?? []) lines.push(...wrap(note), "");
  lines.push(spec.examples.length > 1 ? "examples:" : "example:");
  for (const ex of spec.examples) lines.push(`  ${ex}`);
  return `${lines.join("\n")}\n`;
}

function parseFlags<O extends VerbOptions>(spec: VerbSpec<O>, argv: string[]): VerbValues<O> {
  try {
    return parseArgs({ args: argv, options: spec.options, strict: true, allowPositionals: false }).values as VerbValues<O>;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    throw new CliError("USAGE", `${message} (see writ ${spec.name} --help)`);
  }
}

/** Reports a failure on stderr and returns its exit status. */
export function reportFailure(name: string, e: unknown, io: CliIo): number {
  if (e instanceof CliError) {
    const hint = e.exitStatus === EXIT_USAGE && !e.message.includes("--help") ? ` (see writ ${name} --help)` : "";
    io.stderr(`writ ${name}: ${e.message}${hint}\n`);
    return e.exitStatus;
  }
  io.stderr(`writ ${name}: ${e instanceof Error ? e.message : String(e)}\n`);
  return EXIT_FAILED;
}

/** Makes a runnable verb from its spec. */
export function defineVerb<const O extends VerbOptions>(spec: VerbSpec<O>): Verb {
  return {
    name: spec.name,
    summary: spec.summary,
    help: () => renderHelp(spec),
    async run(argv, io) {
      const helpAt = argv.findIndex((a) => a === "--help" || a === "-h");
      const endAt = argv.indexOf("--");
      if (helpAt !== -1 && (endAt === -1 || helpAt < endAt)) {
        io.stdout(renderHelp(spec));
        return EXIT_OK;
      }
      try {
        refuseSecretFlags(argv);
        return await spec.run(parseFlags(spec, argv), io);
      } catch (e) {
        return reportFailure(spec.name, e, io);
      }
    },
  };
}
