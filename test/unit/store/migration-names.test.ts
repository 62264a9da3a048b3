/**
 * Migration file names: node-pg-migrate applies them in name order and refuses to start when a
 * migration not yet run sorts before one already run. So a branch's new migration must take a
 * number after every existing one (two files with one number, or a number below a released one,
 * would stop every database that already ran the later one).
 */
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const DIR = fileURLToPath(new URL("../../../src/store/migrations/", import.meta.url));

describe("migration names", () => {
  it("each number is used once, four digits then a name", () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith(".sql") || f.endsWith(".ts") || f.endsWith(".js"));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(f).toMatch(/^\d{4}_[a-z0-9_]+\.(sql|ts|js)$/);
    const numbers = files.map((f) => f.slice(0, 4));
    const repeated = numbers.filter((n, i) => numbers.indexOf(n) !== i);
    expect(repeated, `migration numbers used twice: ${repeated.join(", ")}`).toEqual([]);
  });
});
