# Sourced by scripts/image-test.sh, scripts/release-test.sh and scripts/image-engine.sh: a Docker engine of their own,
# Debian's docker.io started with its own data root, state dir, socket and an empty daemon.json;
# no bridge, no iptables, no forwarding or masquerading, so the host's network is left untouched
# (containers use host networking on loopback only).
#
# The caller sets ROOT, WORK (the engine's data: cached layers survive between runs) and NAME (the
# prefix of its messages), then calls engine_up. On exit, the trap removes every container and
# every image whose tag is not in keep_images, and stops the engine. docker() talks to it.
# shellcheck shell=bash

now_ms() { date +%s%3N; }
elapsed() { local ms=$(($(now_ms) - $1)); printf '%d.%01ds' $((ms / 1000)) $((ms % 1000 / 100)); }
say() { echo "$NAME: $*"; }
die() { echo "$NAME: $*" >&2; exit 1; }
skip() { say "skipped: $*"; exit 0; }
# Prints a log's last lines to stderr (why a step failed).
tail_log() { echo "--- last lines of $1 ---" >&2; tail -n "${2:-30}" "$1" >&2 || true; }


DOCKERD=/usr/sbin/dockerd DOCKER=/usr/bin/docker DEBOOTSTRAP=/usr/sbin/debootstrap
keep_images=()
dockerd_pid=

# Skips (exit 0, one line) where no engine can run: not root, no overlay filesystem, no apt-get.
engine_can_run() {
  [[ $(id -u) == 0 ]] || skip "needs root to start its own Docker engine"
  grep -qw overlay /proc/filesystems || skip "the kernel has no overlay filesystem (Docker's overlay2)"
  if [[ ! -x $DOCKERD || ! -x $DOCKER || ! -x $DEBOOTSTRAP ]]; then
    command -v apt-get >/dev/null || skip "no apt-get to install docker.io and debootstrap"
  fi
}

# Installing docker.io must not start the distribution's daemon (default bridge and iptables
# rules): policy-rc.d answers 101 "not allowed" to every service start during the install.
install_packages() {
  local policy=/usr/sbin/policy-rc.d own_policy=false
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && own_policy=true
  fi
  local install=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io debootstrap)
  local status=0
  { "${install[@]}" || { apt-get update -qq && "${install[@]}"; }; } >"$WORK/apt.log" 2>&1 || status=$?
  if $own_policy; then rm -f "$policy"; fi
  [[ $status == 0 ]] || { tail_log "$WORK/apt.log"; die "apt-get could not install docker.io and debootstrap"; }
}

docker() { DOCKER_CONFIG=$WORK/client DOCKER_BUILDKIT=0 "$DOCKER" -H "unix://$SOCKET" "$@"; }

# Mounts left under a directory (an interrupted debootstrap or engine), deepest first; the kernel
# lists them by their real path, so a directory reached through a symlink is resolved first.
unmount_under() {
  local dir mounts
  dir=$(realpath -m -- "$1")
  mounts=$(awk -v d="$dir/" 'index($2 "/", d) == 1 { print $2 }' /proc/self/mounts | sort -r)
  [[ -z $mounts ]] || xargs -r -n 1 umount -l <<<"$mounts"
}

stop_engine() {
  [[ -n $dockerd_pid ]] || return 0
  local containerd_pid
  containerd_pid=$(cat "$RUN_DIR/exec/containerd/containerd.pid" 2>/dev/null || true)
  kill -TERM "$dockerd_pid" 2>/dev/null || true
  for _ in $(seq 300); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$dockerd_pid" 2>/dev/null || true
  wait "$dockerd_pid" 2>/dev/null || true
  # dockerd stops the containerd it started; this one is ours by its pid file, should it linger.
  if [[ -n $containerd_pid ]] && kill -0 "$containerd_pid" 2>/dev/null; then kill -TERM "$containerd_pid" || true; fi
  dockerd_pid=
}

# Every container (the engine is ours alone) and every image but those whose tags are in
# $keep_images (the cached bases); then the untagged ones (the build's stages).
remove_all_but_kept() {
  local ids image
  ids=$(docker ps -aq 2>/dev/null || true)
  [[ -z $ids ]] || xargs docker rm -f <<<"$ids" >/dev/null 2>&1 || true
  while read -r image; do
    [[ -n $image && " ${keep_images[*]} " != *" $image "* ]] && docker rmi -f "$image" >/dev/null 2>&1 || true
  done < <(docker images --format '{{.Repository}}:{{.Tag}}' 2>/dev/null | grep -v '<none>' || true)
  docker image prune -f >/dev/null 2>&1 || true
}

# Exits with the status it is given, or that of the command that ended the script.
engine_cleanup() {
  local status=${1:-$?} start
  trap - EXIT INT TERM
  start=$(now_ms)
  if [[ -n $dockerd_pid ]]; then
    remove_all_but_kept
    stop_engine
  fi
  unmount_under "$WORK"
  rm -rf --one-file-system "$RUN_DIR" "$WORK/rootfs" "$WORK/context"
  say >&9 "cleaned up ($(elapsed "$start")); $WORK holds $(du -sh --one-file-system "$WORK" | cut -f1); total $(elapsed "$total_start")"
  exit "$status"
}

# A registry on a free loopback port, `crane registry serve` (CRANE_BIN) with its blobs and log in
# DIR: sets registry_pid, for the caller to stop, and REGISTRY_ADDRESS (127.0.0.1:PORT). Docker
# pushes to and pulls from it over plain HTTP without being told to (a loopback address).
registry_up() { # DIR
  local port
  port=$(node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")
  mkdir -p "$1/blobs"
  "$CRANE_BIN" registry serve --address "127.0.0.1:$port" --disk "$1/blobs" >"$1/registry.log" 2>&1 &
  registry_pid=$!
  for _ in $(seq 100); do "$CRANE_BIN" catalog --insecure "127.0.0.1:$port" >/dev/null 2>&1 && break; sleep 0.1; done
  "$CRANE_BIN" catalog --insecure "127.0.0.1:$port" >/dev/null || { tail_log "$1/registry.log"; die "the registry did not start"; }
  REGISTRY_ADDRESS=127.0.0.1:$port
}

# Takes the work dir's lock (one engine per work dir), installs the packages if missing, starts
# the engine and sets the exit trap (ENGINE_ON_EXIT, or engine_cleanup). DAEMON_JSON may hold the
# daemon's settings (default: none).
engine_up() {
  engine_can_run
  mkdir -p "$WORK"
  exec 8>"$WORK/lock"
  flock 8
  # The exit trap may run while a command's output goes to a log: it reports through fd 9.
  exec 9>&1
  total_start=$(now_ms)
  local start
  start=$(now_ms)
  if [[ ! -x $DOCKERD || ! -x $DOCKER || ! -x $DEBOOTSTRAP ]]; then
    say "installing Debian's docker.io and debootstrap..."
    install_packages
  fi
  say "$($DOCKERD --version) ($(elapsed "$start"))"

  # Unix socket paths are limited to 108 bytes; containerd's live under the state dir.
  RUN_DIR=$WORK/run
  if ((${#RUN_DIR} > 60)); then RUN_DIR=$(mktemp -d /tmp/docker-engine.XXXXXX); fi
  SOCKET=$RUN_DIR/docker.sock
  trap "${ENGINE_ON_EXIT:-engine_cleanup}" EXIT # a caller's own must call engine_cleanup last
  trap 'exit 130' INT
  trap 'exit 143' TERM

  start=$(now_ms)
  mkdir -p "$RUN_DIR" "$WORK/docker" "$WORK/client"
  local settings='{}' # none of /etc/docker/daemon.json's
  [[ -z ${DAEMON_JSON:-} ]] || settings=$DAEMON_JSON
  echo "$settings" >"$WORK/daemon.json"
  "$DOCKERD" --config-file "$WORK/daemon.json" --data-root "$WORK/docker" --exec-root "$RUN_DIR/exec" \
    --pidfile "$RUN_DIR/dockerd.pid" -H "unix://$SOCKET" --storage-driver overlay2 \
    --bridge none --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false \
    --userland-proxy=false --log-level warn >"$WORK/dockerd.log" 2>&1 &
  dockerd_pid=$!
  for _ in $(seq 600); do
    docker version >/dev/null 2>&1 && break
    kill -0 "$dockerd_pid" 2>/dev/null || { tail_log "$WORK/dockerd.log"; die "dockerd exited at start"; }
    sleep 0.1
  done
  docker version >/dev/null 2>&1 || { tail_log "$WORK/dockerd.log"; die "dockerd did not answer within 60 s"; }
  say "engine up on $SOCKET ($(elapsed "$start"))"
}
