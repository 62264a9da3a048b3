/**
 * The key directory's kept answers (src/api/routes/agents/key-directory.ts): one signing per URL
 * until it is due again (well within the signature's 300 s), any agent or key change notice or
 * a change in this process drops them, and nothing is kept while the change feed is down.
 */
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { DIRECTORY_REFRESH_MS, KeyDirectoryAnswers, type SignedDirectory } from "../../../src/api/routes/agents/key-directory.js";
import { DIRECTORY_MAX_AGE_SECONDS } from "../../../src/core/httpsig/index.js";

class Feed extends EventEmitter {
  listening = true;
}

function setup() {
  let now = 1_000_000;
  const feed = new Feed();
  const answers = new KeyDirectoryAnswers({ clock: () => now }).follow(feed);
  let signed = 0;
  const sign = (url: string) => async (): Promise<SignedDirectory> => {
    signed++;
    return { body: `{"keys":[${signed}]}`, fields: { "content-digest": url, "signature-input": "", signature: "" }, signedAtMs: now };
  };
  return { feed, answers, sign, signed: () => signed, tick: (ms: number) => (now += ms) };
}

describe("KeyDirectoryAnswers", () => {
  it("signs once per URL and serves that answer until it is due again, well before the signature expires", async () => {
    expect(DIRECTORY_REFRESH_MS).toBeLessThanOrEqual((DIRECTORY_MAX_AGE_SECONDS * 1000) / 2);
    const t = setup();
    const a = await t.answers.answer("http://a/d", t.sign("http://a/d"));
    expect(await t.answers.answer("http://a/d", t.sign("http://a/d"))).toBe(a);
    expect(t.signed()).toBe(1);
    // Another authority is another signature.
    const b = await t.answers.answer("http://b/d", t.sign("http://b/d"));
    expect(b.fields["content-digest"]).toBe("http://b/d");
    expect(t.signed()).toBe(2);
    t.tick(DIRECTORY_REFRESH_MS - 1);
    expect(await t.answers.answer("http://a/d", t.sign("http://a/d"))).toBe(a);
    t.tick(1);
    expect(await t.answers.answer("http://a/d", t.sign("http://a/d"))).not.toBe(a);
    expect(t.signed()).toBe(3);
    expect(t.answers.reads).toEqual({ hits: 2, misses: 3 });
  });

  it("drops every answer on an agent's or the keys' change notice, and on clear()", async () => {
    const t = setup();
    for (const drop of [
      () => t.feed.emit("changed", { kind: "agent", agentId: "agent-1" }),
      () => t.feed.emit("changed", { kind: "keys" }),
      () => t.answers.clear(),
    ]) {
      await t.answers.answer("http://a/d", t.sign("http://a/d"));
      const before = t.signed();
      await t.answers.answer("http://a/d", t.sign("http://a/d"));
      expect(t.signed()).toBe(before);
      drop();
      await t.answers.answer("http://a/d", t.sign("http://a/d"));
      expect(t.signed()).toBe(before + 1);
    }
  });

  it("never keeps an answer signed while a change came in", async () => {
    const t = setup();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const racing = t.answers.answer("http://a/d", async () => {
      await gate;
      return t.sign("http://a/d")();
    });
    t.feed.emit("changed", { kind: "agent", agentId: "agent-1" });
    release();
    await racing;
    await t.answers.answer("http://a/d", t.sign("http://a/d"));
    expect(t.signed()).toBe(2);
  });

  it("keeps nothing while the change feed is down (a notice could be missed), and drops all when it is lost", async () => {
    const t = setup();
    await t.answers.answer("http://a/d", t.sign("http://a/d"));
    t.feed.listening = false;
    t.feed.emit("disconnected");
    await t.answers.answer("http://a/d", t.sign("http://a/d"));
    await t.answers.answer("http://a/d", t.sign("http://a/d"));
    expect(t.signed()).toBe(3);
  });
});
