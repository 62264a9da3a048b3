/** Reading a mandate presentation (an SD-JWT string) from a file, for the `writ mandate` verbs. */
import { CliError } from "../errors.js";
import { readText } from "../files.js";

/** The SD-JWT in `path`: its text without surrounding white space; refuses an empty file. */
export function readPresentation(path: string): string {
  const text = readText(path, "--file").trim();
  if (text === "") throw new CliError("INPUT_INVALID", `--file ${path} is empty; it must hold the mandate's SD-JWT (<issuer-jwt>~<disclosures>~<kb-jwt>)`);
  return text;
}
