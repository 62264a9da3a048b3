/**
 * The signed answers of the key directory (`GET /.well-known/http-message-signatures-directory`,
 * ./signed-requests.ts), kept in memory so that a request neither reads every active agent nor
 * signs: one answer per URL the directory was asked at (its signature covers the authority).
 *
 * Promises:
 * - An answer is served for at most `refreshMs` after it was signed (default 60 s, well within
 *   the signature's DIRECTORY_MAX_AGE_SECONDS), then signed again.
 * - Every answer is dropped on any change notice (`agent:…` or `keys`, src/store/changes.ts),
 *   on `clear()` (the routes that change an agent in this process), and when the LISTEN
 *   connection is lost or re-made; while it is down nothing is kept (../../../verify/caches/
 *   followed-cache.ts). A read that raced a change is never kept.
 * - At most `maxUrls` answers are kept (default 16; a Host the client picks cannot grow it).
 */
import type { DirectoryFields } from "../../../core/httpsig/index.js";
import { FollowedCache, type ChangeNoticeFeed } from "../../../verify/index.js";

/** A signed directory answer. */
export interface SignedDirectory {
  body: string;
  fields: DirectoryFields;
  /** When it was signed, epoch ms. */
  signedAtMs: number;
}

/** Options of KeyDirectoryAnswers. */
export interface KeyDirectoryAnswersOptions {
  /** How long an answer is served after it was signed, ms (default 60,000; 0: never kept). */
  refreshMs?: number;
  /** Most answers kept (default 16). */
  maxUrls?: number;
  /** Clock, epoch ms (default Date.now). */
  clock?: () => number;
}

/** The default refresh: a fifth of the signature's 300 s. */
export const DIRECTORY_REFRESH_MS = 60_000;

/** The kept directory answers of one process (see the module comment). */
export class KeyDirectoryAnswers {
  private readonly cache: FollowedCache<SignedDirectory>;

  constructor(opts: KeyDirectoryAnswersOptions = {}) {
    this.cache = new FollowedCache({
      ttlMs: opts.refreshMs ?? DIRECTORY_REFRESH_MS,
      maxEntries: opts.maxUrls ?? 16,
      ...(opts.clock ? { clock: opts.clock } : {}),
    });
  }

  /** Follows `feed` (before this, nothing is kept): any change notice drops every answer. */
  follow(feed: ChangeNoticeFeed): this {
    this.cache.follow(feed);
    feed.on("changed", () => this.cache.clear());
    return this;
  }

  /** The kept answer for `url`, or the one `sign()` makes now (kept unless a change raced it). */
  answer(url: string, sign: () => Promise<SignedDirectory>): Promise<SignedDirectory> {
    return this.cache.load(url, sign);
  }

  /** Drops every answer (an agent changed in this process). */
  clear(): void {
    this.cache.clear();
  }

  /** Answers served from memory (`hits`) and signed (`misses`) since start. */
  get reads(): { hits: number; misses: number } {
    return { hits: this.cache.hits, misses: this.cache.misses };
  }
}
