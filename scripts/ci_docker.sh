#!/usr/bin/env bash
# Runs a command with a Docker engine answering, for the docker runtime's tests:
#   scripts/ci_docker.sh npm test
# Installs Debian's docker.io when docker or dockerd is missing (and busybox-static,
# bash-static for the test image), starts dockerd when none answers and stops it when the
# command ends, and builds the test image (tests/fixtures/docker/Dockerfile) from those
# static binaries: nothing is pulled from an image registry. When no engine can be had,
# the command still runs and the docker tests skip with one line saying why.
set -uo pipefail
cd "$(dirname "$0")/.."
IMAGE="${VF_DOCKER_TEST_IMAGE:-verifiers-ts-test:busybox}"

note() { echo "ci_docker: $*" >&2; }
apt_install() {
  command -v apt-get >/dev/null 2>&1 || return 1
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"; } >/dev/null 2>&1
}

if ! command -v docker >/dev/null 2>&1 || ! { command -v dockerd >/dev/null 2>&1 || [ -x /usr/sbin/dockerd ]; }; then
  apt_install docker.io || note "docker.io could not be installed"
fi
if [ ! -x /bin/busybox ] || [ ! -x /bin/bash-static ]; then
  apt_install busybox-static bash-static || note "busybox-static/bash-static could not be installed"
fi

started=""
stop_engine() {
  if [ -n "$started" ]; then
    kill "$started" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$started" 2>/dev/null || break; sleep 0.1; done
    note "stopped the dockerd it started (pid $started)"
  fi
}
trap stop_engine EXIT

if command -v docker >/dev/null 2>&1 && ! docker info >/dev/null 2>&1; then
  dockerd_bin="$(command -v dockerd || echo /usr/sbin/dockerd)"
  if [ -x "$dockerd_bin" ] && [ -z "${DOCKER_HOST:-}" ]; then
    "$dockerd_bin" >"${TMPDIR:-/tmp}/vf-ci-dockerd.log" 2>&1 &
    started=$!
    for _ in $(seq 1 150); do docker info >/dev/null 2>&1 && break; sleep 0.2; done
    docker info >/dev/null 2>&1 || note "dockerd did not answer (log: ${TMPDIR:-/tmp}/vf-ci-dockerd.log)"
  fi
fi

if docker info >/dev/null 2>&1 && [ -x /bin/busybox ] && [ -x /bin/bash-static ]; then
  ctx="$(mktemp -d)"
  cp /bin/busybox "$ctx/busybox" && cp /bin/bash-static "$ctx/bash" &&
    cp tests/fixtures/docker/Dockerfile "$ctx/Dockerfile" &&
    docker build -q -t "$IMAGE" "$ctx" >/dev/null 2>&1 || note "the test image $IMAGE could not be built"
  rm -rf "$ctx"
fi

"$@"
