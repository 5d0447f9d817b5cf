/**
 * A real browser for tests: the machine's Chromium (`apt-get install chromium`) driven by
 * playwright-core (no browser download), headless, offline-minded flags, and a fresh
 * profile directory removed on close. Every console error, uncaught page error and
 * Content-Security-Policy violation of any page in the context is collected in `problems`,
 * so a test can fail on them.
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

/** A launched browser context, what went wrong in its pages, and its cleanup. */
export interface TestBrowser {
  context: BrowserContext;
  /** Console errors, uncaught errors and CSP violations, one line each, in order. */
  problems: string[];
  close(): Promise<void>;
}

/** Reports each `securitypolicyviolation` of a document to the test (runs before the page's scripts). */
const REPORT_VIOLATIONS = `document.addEventListener("securitypolicyviolation", (e) =>
  globalThis.__vfViolation(e.effectiveDirective + " blocked " + (e.blockedURI || "inline") +
    " (" + e.sourceFile + ":" + e.lineNumber + "): " + (e.sample || "")), true);`;

/** Collects what went wrong in every page of `context` into `problems`. */
async function watchProblems(context: BrowserContext, problems: string[]): Promise<void> {
  context.on("console", (m) => {
    if (m.type() === "error") problems.push(`console error: ${m.text()} (${m.page()?.url()})`);
  });
  context.on("weberror", (e) => problems.push(`uncaught: ${e.error().message}`));
  await context.exposeBinding(
    "__vfViolation",
    ({ page }, text: string) => problems.push(`CSP violation: ${text} (${page.url()})`),
  );
  await context.addInitScript(REPORT_VIOLATIONS);
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
  const problems: string[] = [];
  await watchProblems(context, problems);
  return {
    context,
    problems,
    close: async () => {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
