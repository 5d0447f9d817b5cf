/**
 * The relay's carrier for a sandbox with no JavaScript runtime of its own (an image of
 * busybox, or a program's static binary): the JavaScript runtime this host runs on — the
 * `vf` single binary (a Bun binary, which acts as `bun` with `BUN_BE_BUN=1`), or the Bun,
 * Deno or Node executable — copied into the sandbox once, with the dynamic loader and the
 * C libraries it links, and started through that loader, so the sandbox's own C library
 * (musl, none at all) does not matter; only the machine type does. The files go to
 * `/tmp/vf-relay-<key>/` (the key names their sizes and times): a second relay in the same
 * sandbox finds them there, and they go with the sandbox.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { arch } from "node:os";
import { basename } from "node:path";
import { execPath, isCompiled } from "../_runtime/is_compiled.ts";
import { runtimeName } from "../_runtime/runtime_name.ts";
import { SandboxError } from "../errors.ts";
import type { Runtime } from "../runtime/runtime.ts";

/** The host's runtime as the sandbox runs it. */
export interface RelayCarrier {
  /** Where its files go in the sandbox. */
  readonly dir: string;
  /** The machine type it runs on, as `uname -m` says it. */
  readonly machine: string;
  /** The arguments that run a module given as the next argument (`-e`, `eval`). */
  readonly evalArgs: readonly string[];
  /** Its files: the executable as `runtime`, each library as `lib/<name>`. */
  readonly files: readonly { readonly name: string; readonly path: string }[];
  /** The loader's name under `lib/`, or null for a static executable. */
  readonly loader: string | null;
}

/** `uname -m` of this host's machine type. */
const MACHINES: Record<string, string> = { x64: "x86_64", arm64: "aarch64" };

let cached: RelayCarrier | string | undefined;

/** The carrier of this host (computed once), or why there is none. */
export function relayCarrier(): RelayCarrier | string {
  return cached ??= findCarrier();
}

function findCarrier(): RelayCarrier | string {
  const machine = MACHINES[arch()];
  if (machine === undefined) return `this host's machine type (${arch()}) has no relay carrier`;
  const name = runtimeName();
  if (name === "deno" && isCompiled()) {
    return "a Deno-compiled vf binary cannot run the relay's script";
  }
  const exe = execPath();
  const evalArgs = name === "deno"
    ? ["eval"]
    : name === "node"
    ? ["--input-type=module", "-e"]
    : ["-e"];
  const files = [{ name: "runtime", path: exe }];
  const interp = elfInterpreter(exe);
  let loader: string | null = null;
  if (interp !== null) {
    const listed = spawnSync(interp, ["--list", exe], { encoding: "utf8", timeout: 10_000 });
    if (listed.status !== 0) return `cannot list the libraries of ${exe}`;
    for (const line of listed.stdout.split("\n")) {
      const m = /^\s*(\S+) => (\/\S+) \(0x/.exec(line);
      if (m) files.push({ name: `lib/${m[1]}`, path: m[2]! });
    }
    loader = basename(interp);
    files.push({ name: `lib/${loader}`, path: interp });
  }
  const key = createHash("sha256");
  for (const f of files) {
    const s = statSync(f.path);
    key.update(`${f.name}\0${s.size}\0${s.mtimeMs}\0`);
  }
  return {
    dir: `/tmp/vf-relay-${key.digest("hex").slice(0, 16)}`,
    machine,
    evalArgs,
    files,
    loader,
  };
}

/** The ELF interpreter (dynamic loader) a 64-bit little-endian executable names, or null. */
function elfInterpreter(path: string): string | null {
  const fd = openSync(path, "r");
  try {
    const head = new Uint8Array(64);
    readSync(fd, head, 0, 64, 0);
    const view = new DataView(head.buffer);
    if (view.getUint32(0) !== 0x7f454c46 || head[4] !== 2 || head[5] !== 1) return null;
    const phoff = Number(view.getBigUint64(0x20, true));
    const phentsize = view.getUint16(0x36, true);
    const phnum = view.getUint16(0x38, true);
    const table = new Uint8Array(phentsize * phnum);
    readSync(fd, table, 0, table.length, phoff);
    const ph = new DataView(table.buffer);
    for (let i = 0; i < phnum; i++) {
      const at = i * phentsize;
      if (ph.getUint32(at, true) !== 3) continue; // PT_INTERP
      const offset = Number(ph.getBigUint64(at + 8, true));
      const size = Number(ph.getBigUint64(at + 0x20, true));
      const name = new Uint8Array(size);
      readSync(fd, name, 0, size, offset);
      return new TextDecoder().decode(name).replace(/\0+$/, "");
    }
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Copies the carrier into the sandbox unless a relay put it there already: its files go
 * to a folder of their own, made executable, then renamed into place (a half-copied
 * carrier is never run).
 */
export async function installCarrier(runtime: Runtime, carrier: RelayCarrier): Promise<void> {
  const partial = `${carrier.dir}.${Math.random().toString(36).slice(2)}`;
  // at once: each write is a command of its own (a round trip to the sandbox)
  await Promise.all(
    carrier.files.map((f) => runtime.write(`${partial}/${f.name}`, readFileSync(f.path))),
  );
  const placed = await runtime.run([
    "sh",
    "-c",
    'chmod 755 "$1"/runtime "$1"/lib/* && if [ -e "$2" ]; then rm -rf "$1"; else mv "$1" "$2"; fi',
    "vf-relay",
    partial,
    carrier.dir,
  ]);
  if (placed.exitCode !== 0) {
    throw new SandboxError(`Cannot install the model relay in the sandbox: ${placed.stderr}`, {
      hint: "The relay needs a writable /tmp in the sandbox",
    });
  }
}
