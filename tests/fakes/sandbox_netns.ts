/**
 * The network of a fake sandbox (Prime, Modal): a network namespace of its own with only a
 * loopback that is up, as a real sandbox on another machine has, so a program that tries
 * this host's 127.0.0.1 finds nothing there, while the commands of one sandbox share their
 * loopback (a relay listening in one command is reached by another). Made with `ip netns`
 * (root only); every command enters it with `nsenter --net`.
 *
 * Where that is not possible (not root, no `ip` or `nsenter`) commands share this host's
 * network, as before: {@link isolatedNetworks} says which, and a test that needs the
 * isolation skips on it.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import process from "node:process";

let supported: boolean | null = null;

/** True when fake sandboxes get networks of their own here (checked once). */
export function isolatedNetworks(): boolean {
  if (supported === null) {
    const name = `vf-fake-probe-${process.pid}`;
    supported = process.getuid?.() === 0 &&
      spawnSync("ip", ["netns", "add", name], { stdio: "ignore" }).status === 0 &&
      spawnSync("nsenter", [`--net=/run/netns/${name}`, "--", "true"], { stdio: "ignore" })
          .status === 0;
    spawnSync("ip", ["netns", "delete", name], { stdio: "ignore" });
  }
  return supported;
}

/** One sandbox's network namespace. */
export class SandboxNetwork {
  readonly #name: string | null;

  /** Makes the namespace of sandbox `id` (none where {@link isolatedNetworks} is false). */
  constructor(id: string) {
    if (!isolatedNetworks()) {
      this.#name = null;
      return;
    }
    this.#name = `vf-fake-${process.pid}-${id.replace(/[^A-Za-z0-9]/g, "").slice(-24)}`;
    const made = spawnSync("ip", ["netns", "add", this.#name], { encoding: "utf8" });
    const up = spawnSync("ip", ["-n", this.#name, "link", "set", "lo", "up"], {
      encoding: "utf8",
    });
    if (made.status !== 0 || up.status !== 0) {
      throw new Error(`fake sandbox network: ${made.stderr}${up.stderr}`);
    }
  }

  /** `argv` run inside the namespace. */
  wrap(argv: string[]): string[] {
    return this.#name === null
      ? argv
      : ["nsenter", `--net=/run/netns/${this.#name}`, "--", ...argv];
  }

  /** Removes the namespace (its processes are gone or going); idempotent. */
  close(): void {
    if (this.#name !== null) spawnSync("ip", ["netns", "delete", this.#name], { stdio: "ignore" });
  }
}
