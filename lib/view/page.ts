/**
 * The run viewer's HTML: one document with its stylesheet and script inline (from
 * `assets.gen.ts`) and a Content-Security-Policy that allows only those two (by hash)
 * and, when served, requests to its own origin — so the page loads nothing from anywhere
 * else. Data goes into `<script type="application/json">` blocks with `<` escaped. The
 * policy blocks every `style` attribute, so the script sets sizes through the CSSOM
 * (`el.style.height = …`), which `style-src` does not govern.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { PAGE_CSS, PAGE_JS } from "./assets.gen.ts";

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

/** JSON text safe inside a `<script>` element (no `</script>`, no `<!--`). */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** What the page boots from: the local server, or data embedded in the file. */
export type PageBoot =
  | { mode: "server"; runCount: number }
  | { mode: "file"; data: unknown };

/**
 * The page. `episodesJson` (file mode) is the JSON text of the per-run arrays of
 * gzip+base64 episode chunks.
 */
export function pageHtml(boot: PageBoot, episodesJson?: string): string {
  const connect = boot.mode === "server" ? "'self'" : "'none'";
  const csp = [
    "default-src 'none'",
    `script-src ${sha256(PAGE_JS)}`,
    `style-src ${sha256(PAGE_CSS)}`,
    `connect-src ${connect}`,
    "img-src data:",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<title>vf view</title>
<style>${PAGE_CSS}</style>
</head>
<body>
<a class="skip" href="#main" data-anchor="1">Skip to content</a>
<header class="site">
<h1>vf view</h1>
<nav id="runs" aria-label="Runs"></nav>
<p id="live" class="note" role="status" aria-live="polite"></p>
</header>
<main id="main" tabindex="-1" aria-busy="true"><p>Loading…</p></main>
<script id="vf-boot" type="application/json">${scriptJson(boot)}</script>
${
    episodesJson === undefined
      ? ""
      : `<script id="vf-episodes" type="application/json">${episodesJson}</script>\n`
  }<script>${PAGE_JS}</script>
</body>
</html>
`;
}
