/**
 * Test helper: points this process at a fresh Modal fake the way a user points tools at
 * Modal (`MODAL_SERVER_URL`, `MODAL_TOKEN_ID`, `MODAL_TOKEN_SECRET`), with an empty
 * `MODAL_CONFIG_PATH` and a temporary `VF_CACHE_DIR` (ledger, limiter), and restores the
 * environment afterwards.
 *
 * @module
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { startModalFake } from "./modal_server.ts";
import type { ModalFake, ModalFakeOptions } from "./modal_server.ts";

/** Variables a Modal test controls. */
const VARS = [
  "MODAL_SERVER_URL",
  "MODAL_TOKEN_ID",
  "MODAL_TOKEN_SECRET",
  "MODAL_ENVIRONMENT",
  "MODAL_PROFILE",
  "MODAL_CONFIG_PATH",
  "MODAL_IMAGE_BUILDER_VERSION",
  "VF_CACHE_DIR",
];

/** A fake plus the temp dirs and saved environment of one test file. */
export interface ModalTestEnv {
  fake: ModalFake;
  cacheDir: string;
  scratch: string;
  /** Restores the environment, closes the fake and removes the temp dirs. */
  dispose(): Promise<void>;
}

/** Starts a fake and points the process environment at it. */
export async function setupModalEnv(options: ModalFakeOptions = {}): Promise<ModalTestEnv> {
  const saved: Record<string, string | undefined> = {};
  for (const k of VARS) saved[k] = process.env[k];
  const scratch = mkdtempSync(join(tmpdir(), "vf-modal-test-"));
  const cacheDir = join(scratch, "cache");
  const fake = await startModalFake(options);
  for (const k of VARS) delete process.env[k];
  Object.assign(process.env, fake.env, {
    MODAL_CONFIG_PATH: join(scratch, "no-modal.toml"),
    VF_CACHE_DIR: cacheDir,
  });
  return {
    fake,
    cacheDir,
    scratch,
    async dispose() {
      for (const k of VARS) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
      await fake.close();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}
