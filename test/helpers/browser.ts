/**
 * Headless Chromium for the browser tests, driven by playwright-core: Debian's `chromium`
 * (/usr/bin/chromium; `.ci/run` installs it when missing, CHROMIUM_PATH overrides), never a
 * browser download. Flags as the machine notes give them (no sandbox as root, no background
 * networking on a closed network), and a fresh profile folder, removed on close.
 *
 * Screenshots: `screenshot(page, name)` always writes under a temporary folder (and checks the
 * PNG signature); with WRIT_UPDATE_SCREENSHOTS=1 it writes docs/screenshots/<name>.png too, so a
 * test run never changes committed files unless asked.
 */
import { mkdtemp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type BrowserContext, type Page } from "playwright-core";

/** Where Debian's package puts the browser. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** The flags every launch uses (besides the profile folder). */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
] as const;

/** The committed screenshots folder. */
export const SCREENSHOTS_DIR = fileURLToPath(new URL("../../docs/screenshots/", import.meta.url));

/** A running browser with one page. */
export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Writes a PNG of the page (see the module comment); its bytes. */
  screenshot(name: string, opts?: { fullPage?: boolean }): Promise<Buffer>;
  close(): Promise<void>;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Launches Chromium with a fresh profile and opens a page of `width` x `height`. */
export async function launchBrowser(opts: { width?: number; height?: number } = {}): Promise<TestBrowser> {
  const profile = await mkdtemp(join(tmpdir(), "writ-chromium-"));
  const shots = await mkdtemp(join(tmpdir(), "writ-shots-"));
  let context: BrowserContext;
  try {
    // launchPersistentContext passes the profile as --user-data-dir.
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [...CHROMIUM_FLAGS],
      viewport: { width: opts.width ?? 1280, height: opts.height ?? 860 },
      locale: "en-GB",
      timezoneId: "UTC",
    });
  } catch (e) {
    await rm(profile, { recursive: true, force: true });
    throw new Error(`cannot start ${CHROMIUM_PATH} (install Debian's chromium: apt-get install chromium): ${e instanceof Error ? e.message : String(e)}`);
  }
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async screenshot(name, shotOpts = {}) {
      const file = join(shots, `${name}.png`);
      await page.screenshot({ path: file, fullPage: shotOpts.fullPage ?? false });
      const bytes = await readFile(file);
      if (!bytes.subarray(0, 8).equals(PNG_SIGNATURE)) throw new Error(`${file} is not a PNG`);
      if (process.env.WRIT_UPDATE_SCREENSHOTS === "1") {
        await mkdir(SCREENSHOTS_DIR, { recursive: true });
        await writeFile(join(SCREENSHOTS_DIR, `${name}.png`), bytes);
      }
      return bytes;
    },
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
      await rm(shots, { recursive: true, force: true });
    },
  };
}
