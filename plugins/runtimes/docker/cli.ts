/**
 * The `docker` CLI as the docker runtime drives it: one invocation, its bytes back, and the
 * engine's answers read into what the runtime needs to know (no such container, no such
 * image, the engine not reachable). The CLI finds the engine itself (`DOCKER_HOST`,
 * `DOCKER_CONTEXT`, TLS settings, `~/.docker`), so its environment is this process's.
 *
 * @module
 */
import {
  getAllEnv,
  type RuntimeProcess,
  SandboxError,
  spawnLive,
  spawnProgram,
} from "../../../kit/mod.ts";

/** What one `docker` invocation returned. */
export interface DockerResult {
  exitCode: number;
  stdout: Uint8Array;
  stderr: Uint8Array;
  /** The stderr as text, trimmed. */
  message: string;
  /** True when stdout or stderr passed `maxOutputBytes` and was cut. */
  truncated: boolean;
}

/** Options of {@link docker}. */
export interface DockerCallOptions {
  /** Bytes for the CLI's stdin (`docker exec -i`). @default none */
  stdin?: Uint8Array | undefined;
  /** Variables added to the CLI's own environment (`docker exec -e NAME` reads them). */
  env?: Record<string, string> | undefined;
  /** Kills the CLI after this long (the container's processes are not its to kill). */
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Keep at most this many bytes of stdout and of stderr each. @default no limit */
  maxOutputBytes?: number | undefined;
}

/** The CLI program; `VF_DOCKER_CLI` names another (a wrapper, podman's docker shim). */
function cliPath(env: Record<string, string>): string {
  return env.VF_DOCKER_CLI || "docker";
}

/** Starts `docker <args>` with its stdin and stdout open (`docker exec -i`, a live program). */
export function dockerLive(args: string[], env: Record<string, string>): RuntimeProcess {
  const base = getAllEnv();
  return spawnLive([cliPath(base), ...args], { cwd: "/", env: { ...base, ...env } });
}

/** Runs `docker <args>`; never throws for a non-zero exit (127 when the CLI is missing). */
export async function docker(
  args: string[],
  options: DockerCallOptions = {},
): Promise<DockerResult> {
  const base = getAllEnv();
  const r = await spawnProgram([cliPath(base), ...args], {
    cwd: "/",
    env: { ...base, ...options.env },
    stdin: options.stdin,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    keepBytes: true,
    ...(options.maxOutputBytes === undefined ? {} : { maxOutputBytes: options.maxOutputBytes }),
  });
  return {
    exitCode: r.exitCode,
    stdout: r.stdoutBytes ?? new Uint8Array(0),
    stderr: r.stderrBytes ?? new Uint8Array(0),
    message: engineMessage(r.stderr),
    truncated: r.truncated,
  };
}

/** The CLI's stderr without its usage footer and its `docker: ` prefix. */
function engineMessage(stderr: string): string {
  return stderr.split("\n").filter((l) => !/^Run '.*--help' for more information/.test(l))
    .join("\n").trim().replace(/^docker: /, "");
}

/** True when the engine answered that the container (or object) does not exist. */
export function isNoSuchContainer(message: string): boolean {
  return /no such (container|object)/i.test(message);
}

/** True when the engine answered that the image is not on this machine. */
export function isNoSuchImage(message: string): boolean {
  return /no such image|image .* not found|pull access denied|repository does not exist/i.test(
    message,
  );
}

/** True when the CLI itself could not be started (spawnProgram's 127 and its reason). */
function isCliMissing(r: DockerResult): boolean {
  return r.exitCode === 127 && /^Cannot run "/.test(r.message);
}

/** True when the CLI could not reach the engine at all. */
export function isEngineUnreachable(r: DockerResult): boolean {
  return isCliMissing(r) ||
    /cannot connect to the docker daemon|is the docker daemon running|error during connect|permission denied.*docker/i
      .test(r.message);
}

/** The SandboxError of a CLI that could not reach the engine, with the fix as its hint. */
export function engineUnreachable(r: DockerResult): SandboxError {
  if (isCliMissing(r)) {
    return new SandboxError("Cannot reach Docker: the `docker` CLI is not installed", {
      hint: "Install Docker (Debian: apt-get install docker.io) or set VF_DOCKER_CLI",
    });
  }
  const denied = /permission denied/i.test(r.message);
  return new SandboxError(`Cannot reach the Docker engine: ${r.message}`, {
    hint: denied
      ? "Add your user to the `docker` group (then log in again), or set DOCKER_HOST"
      : "Start dockerd (or Docker Desktop), or point DOCKER_HOST at a running engine",
  });
}

/** The SandboxError of an image that is not on this machine, naming it and how to get it. */
export function imageMissing(image: string, message: string): SandboxError {
  return new SandboxError(`Cannot start a container: image "${image}" is not on this machine`, {
    hint: `Build it (\`docker build -t ${image} <dir>\`) or pull it (\`docker pull ${image}\`); ` +
      `the runtime never pulls. Docker said: ${message}`,
  });
}
