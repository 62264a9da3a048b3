import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { toKubeYaml } from "../../../src/manifests/yaml.js";

const root = join(import.meta.dirname, "../../..");
const files = ["crds", "charts/writ/crds", "config/samples"].flatMap((d) =>
  readdirSync(join(root, d))
    .filter((f) => f.endsWith(".yaml"))
    .map((f) => join(d, f)),
);

describe("YAML for Kubernetes", () => {
  it("quotes keys and values that YAML 1.1 reads otherwise (the P-256 `y` member)", () => {
    const value = { y: "n", on: "yes", at: "2026-01-02T03:04:05Z", octal: "0o17", plain: "hello", n: 1 };
    const text = toKubeYaml(value);
    expect(parse(text, { version: "1.1" })).toEqual(value);
    expect(parse(text)).toEqual(value);
    expect(text).toContain('"y": "n"');
  });
  it.each(files)("%s reads the same under YAML 1.1 (go-yaml, the API server) and 1.2", (file) => {
    const text = readFileSync(join(root, file), "utf8");
    const v11 = parseAllDocuments(text, { version: "1.1" }).map((d) => d.toJS());
    const v12 = parseAllDocuments(text).map((d) => d.toJS());
    expect(v11).toEqual(v12);
  });
});
