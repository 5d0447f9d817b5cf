/**
 * `vf view` for browser tests: the server started as a user starts it, and the rows a
 * table shows.
 *
 * @module
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import process from "node:process";
import type { Page } from "playwright-core";
import { cliArgv } from "./_cli.ts";

/** Starts `vf view <dirs>` and resolves with the URL it prints. */
export function startViewer(dirs: string[]): Promise<{ url: string; child: ChildProcess }> {
  const [cmd, ...args] = cliArgv(["view", ...dirs]);
  const child = spawn(cmd, args, {
    env: { ...process.env, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    let errText = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => errText += d);
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      const m = /^(http:\/\/127\.0\.0\.1:\d+\/)$/m.exec(out);
      if (m) resolve({ url: m[1]!, child });
    });
    child.on("exit", (code) => reject(new Error(`vf view exited ${code}: ${errText}`)));
  });
}

/** Rows of a table body, spacer rows left out. */
export async function rowTexts(page: Page, tableId: string): Promise<string[]> {
  return await page.locator(`#${tableId} tbody tr:not(.spacer)`).allInnerTexts();
}
