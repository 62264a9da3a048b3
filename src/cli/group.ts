/**
 * A verb group (`writ log verify|bundle|monitor`): dispatches to the named verb. `writ <group>`
 * alone prints the group's verbs and exits 2; `writ <group> --help` prints them and exits 0; an
 * unknown verb exits 2 and lists the known ones.
 */
import { EXIT_OK, EXIT_USAGE } from "./errors.js";
import type { CliIo } from "./io.js";
import type { Verb } from "./verb.js";

/** A group of verbs run as `writ <group> <verb> [flags]`. */
export interface VerbGroup {
  readonly name: string;
  readonly summary: string;
  run(argv: string[], io: CliIo): Promise<number>;
}

function listing(name: string, summary: string, verbs: readonly Verb[]): string {
  const width = Math.max(...verbs.map((v) => v.name.length));
  const rows = verbs.map((v) => `  writ ${v.name.padEnd(width)}  ${v.summary}`);
  return `writ ${name}: ${summary}\n\n${rows.join("\n")}\n\nRun writ ${name} <verb> --help for a verb's flags and an example.\n`;
}

/** Makes a group from verbs whose names are `<group> <verb>`. */
export function defineGroup(name: string, summary: string, verbs: readonly Verb[]): VerbGroup {
  const byName = new Map(verbs.map((v) => [v.name.slice(name.length + 1), v]));
  return {
    name,
    summary,
    async run(argv, io) {
      const [sub, ...rest] = argv;
      if (sub === "--help" || sub === "-h" || sub === "help") {
        io.stdout(listing(name, summary, verbs));
        return EXIT_OK;
      }
      const verb = sub === undefined ? undefined : byName.get(sub);
      if (verb === undefined) {
        const what = sub === undefined ? `writ ${name} needs a verb` : `writ ${name}: unknown verb "${sub}"`;
        io.stderr(`${what}\n\n${listing(name, summary, verbs)}`);
        return EXIT_USAGE;
      }
      return verb.run(rest, io);
    },
  };
}
