/**
 * Every verb: `--help` prints an example and exits 0, bad usage exits 2 naming the problem, and
 * a flag that would put a secret on the command line is refused with exit 2.
 */
import { describe, expect, it } from "vitest";
import { agreementGroup } from "../../../src/cli/agreement/index.js";
import { delegationGroup } from "../../../src/cli/delegation/index.js";
import { keysGroup } from "../../../src/cli/keys/index.js";
import { logGroup } from "../../../src/cli/log/index.js";
import { inquireVerb } from "../../../src/cli/verbs/inquire.js";
import { verifyVerb } from "../../../src/cli/verbs/verify.js";
import { runVerb } from "./capture.js";

const groups = [keysGroup, agreementGroup, delegationGroup, logGroup];
const verbsByArgv: Array<{ label: string; run: (argv: string[]) => ReturnType<typeof runVerb> }> = [
  ...[
    ["keys", "generate"],
    ["agreement", "sign"],
    ["agreement", "ack"],
    ["agreement", "amend"],
    ["agreement", "revoke"],
    ["delegation", "narrow"],
    ["log", "verify"],
    ["log", "bundle"],
    ["log", "monitor"],
  ].map(([g, v]) => ({
    label: `${g} ${v}`,
    run: (argv: string[]) =>
      runVerb(
        groups.find((x) => x.name === g)!,
        [v as string, ...argv],
      ),
  })),
  { label: "verify", run: (argv: string[]) => runVerb(verifyVerb, argv) },
  { label: "inquire", run: (argv: string[]) => runVerb(inquireVerb, argv) },
];

describe.each(verbsByArgv)("writ $label", ({ label, run }) => {
  it("--help prints usage, flags and an example, exit 0", async () => {
    const r = await run(["--help"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`usage: writ ${label} `);
    expect(r.out).toMatch(/examples?:\n {2}\S/);
    expect(r.out).toContain("-h, --help");
    expect(r.err).toBe("");
  });

  it("an unknown flag exits 2 and points at --help", async () => {
    const r = await run(["--no-such-flag"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("--no-such-flag");
    expect(r.err).toContain(`writ ${label} --help`);
  });

  it("a positional argument exits 2", async () => {
    const r = await run(["stray"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("stray");
  });

  it.each(["--token", "--api-key=abc", "--password", "--key"])("refuses %s: secrets never come from arguments", async (flag) => {
    const r = await run([flag, "s3cret"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/refused: secrets passed as arguments land in shell history/);
    expect(r.err).not.toContain("s3cret");
  });
});

describe("verb groups", () => {
  it("writ <group> alone lists its verbs and exits 2; --help exits 0; an unknown verb exits 2", async () => {
    const none = await runVerb(logGroup, []);
    expect(none.code).toBe(2);
    expect(none.err).toContain("writ log verify");
    const help = await runVerb(logGroup, ["--help"]);
    expect(help.code).toBe(0);
    expect(help.out).toContain("writ log monitor");
    const bad = await runVerb(agreementGroup, ["sing"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('unknown verb "sing"');
  });

  it("a missing required flag exits 2 naming the flag", async () => {
    const r = await runVerb(agreementGroup, ["sign", "--in", "x.yaml"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("--key-file is required");
  });

  it("--output accepts only the verb's formats", async () => {
    const r = await runVerb(keysGroup, ["generate", "--out", "/nonexistent/k", "--output", "xml"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("--output must be one of text, json, yaml");
  });
});
