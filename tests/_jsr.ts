/**
 * Helpers of the published-package tests: this repository's npm dependencies served by a
 * loopback npm registry exactly as they are installed in `node_modules`.
 *
 * @module
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "./_plugin_package.ts";
import { type NpmRegistry, packTarball } from "./fakes/npm_registry.ts";

/** Every file under `dir`, keyed by its path relative to `dir`. */
function filesUnder(dir: string, base = dir, out: Record<string, Uint8Array> = {}) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    if (st.isDirectory()) filesUnder(path, base, out);
    else if (st.isFile()) out[relative(base, path)] = readFileSync(path);
  }
  return out;
}

/** The `dependencies` of package.json (name -> exact version). */
export function runtimeDependencies(): Record<string, string> {
  return JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).dependencies;
}

/**
 * Publishes each runtime dependency to `reg` from `node_modules` (checking that the
 * installed version is the declared one), packed as `npm pack` packs it.
 */
export function publishDependencies(reg: NpmRegistry, time?: Date): void {
  for (const [name, version] of Object.entries(runtimeDependencies())) {
    const dir = join(ROOT, "node_modules", name);
    const files = filesUnder(dir);
    const pkg = JSON.parse(new TextDecoder().decode(files["package.json"]));
    if (pkg.version !== version) {
      throw new Error(`node_modules/${name} is ${pkg.version}, package.json wants ${version}`);
    }
    reg.publish(name, version, packTarball(files), {
      dependencies: pkg.dependencies ?? {},
      time,
    });
  }
}
