/**
 * A real browser for tests: the machine's Chromium (`apt-get install chromium`) driven by
 * playwright-core (no browser download), headless, offline-minded flags, and a fresh
 * profile directory removed on close.
 *
 * @module
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";

/** Where Debian's chromium package puts the browser. */
export const CHROMIUM = "/usr/bin/chromium";

/** Why browser tests cannot run here, or null when they can. */
export function browserMissing(): string | null {
  return existsSync(CHROMIUM)
    ? null
    : `SKIPPED: no ${CHROMIUM} (install it with \`apt-get install -y chromium\`; .ci/run does)`;
}

/** A launched browser context and its cleanup. */
export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Launches headless Chromium with a fresh user data dir. */
export async function launchBrowser(): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), "vf-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    context,
    close: async () => {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
