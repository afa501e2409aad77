#!/usr/bin/env bash
# A private D-Bus session bus with a private, unlocked gnome-keyring, so nothing touches a user's
# real keyring.
#
#   scripts/private-keyring.sh run COMMAND [ARGS...]
#       Runs COMMAND with DBUS_SESSION_BUS_ADDRESS pointing at a private bus whose Secret Service
#       is a fresh, unlocked gnome-keyring. Bus, daemon and keyring files are gone afterwards.
#   scripts/private-keyring.sh start DIR [--no-keyring]
#       Starts a detached private bus (and, unless --no-keyring, an unlocked keyring on it) and
#       writes DIR/address, DIR/bus.pid and DIR/keyring.pid. Both end when `stop DIR` is run or
#       when the process that ran `start` exits.
#   scripts/private-keyring.sh stop DIR
#       Stops what `start DIR` started and removes DIR.
#
# Every bus and daemon started here is stopped on every path: success, failure, and a TERM, INT or
# HUP sent to `run`. Each is sent TERM, then KILL if it has not ended within a few seconds.
set -euo pipefail

# A caller's thread may block signals (a test process's worker threads block SIGTERM, and a child
# inherits the mask), and daemons started with that mask would never see TERM: start over with
# every signal unblocked. Perl is part of every Debian system.
if [ -z "${RESOURCEFUL_KEYRING_UNMASKED:-}" ] && [ -r /proc/self/status ] && command -v perl >/dev/null 2>&1 \
    && ! grep -qE '^SigBlk:[[:space:]]*0+$' /proc/$$/status; then
    export RESOURCEFUL_KEYRING_UNMASKED=1
    exec perl -MPOSIX -e 'sigprocmask(SIG_SETMASK, POSIX::SigSet->new); exec { $ARGV[0] } @ARGV or die "exec: $!\n"' \
        /usr/bin/env bash "$0" "$@"
fi
unset RESOURCEFUL_KEYRING_UNMASKED

die() { echo "private-keyring: $*" >&2; exit 1; }

need() {
    for tool in "$@"; do
        command -v "$tool" >/dev/null 2>&1 || die "$tool is missing: install dbus, dbus-bin and gnome-keyring (make setup does)"
    done
}

# Writes a session bus configuration without service activation, so that asking for the Secret
# Service never starts a second, locked daemon.
write_bus_config() {
    cat > "$1" <<CONFIG
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=$2</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
CONFIG
}

secrets_owned() {
    dbus-send --bus="$1" --dest=org.freedesktop.DBus --type=method_call --print-reply \
        /org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null \
        | grep -q "boolean true"
}

# Starts an unlocked gnome-keyring on bus $1 with throwaway home $2 and waits until it owns
# org.freedesktop.secrets (--unlock returns before it does). Prints the daemon's pid.
start_keyring() {
    local bus=$1 home=$2 password
    mkdir -p "$home/.local/share/keyrings"
    password=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
    printf '%s' "$password" | env -u XDG_RUNTIME_DIR HOME="$home" DBUS_SESSION_BUS_ADDRESS="$bus" \
        gnome-keyring-daemon --unlock --components=secrets --daemonize >/dev/null
    for _ in $(seq 1 400); do
        if secrets_owned "$bus"; then
            dbus-send --bus="$bus" --dest=org.freedesktop.DBus --type=method_call --print-reply \
                /org/freedesktop/DBus org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets \
                | awk '/uint32/ { print $2 }'
            return 0
        fi
        sleep 0.025
    done
    die "gnome-keyring-daemon did not appear on the bus within 10 s"
}

# True while process $1 exists and is not a zombie (a daemon's reaper may be slow to collect it).
alive() {
    local state
    kill -0 "$1" 2>/dev/null || return 1
    state=$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ]
}

# The processes that belong to the bus in directory $1: its dbus-daemon (whose command line names
# the directory) and whatever runs with the bus's address or a home inside it (the keyring).
processes_of() {
    local dir=$1
    { grep -lsF -- "$dir/bus.conf" /proc/[0-9]*/cmdline
      grep -lsF -e "DBUS_SESSION_BUS_ADDRESS=unix:path=$dir/" -e "HOME=$dir/" /proc/[0-9]*/environ
    } | cut -d/ -f3 | sort -u | grep -vx "$$" || true
}

# Stops processes $@: CONT (a test may have frozen one), TERM, and KILL for any still there after
# 5 s; returns when all have ended.
stop_processes() {
    local pid remaining
    [ $# -gt 0 ] || return 0
    for pid in "$@"; do kill -CONT "$pid" 2>/dev/null || true; kill -TERM "$pid" 2>/dev/null || true; done
    remaining=$(still_alive_after_5s "$@") || return 0
    for pid in $remaining; do kill -KILL "$pid" 2>/dev/null || true; done
    remaining=$(still_alive_after_5s $remaining) || return 0
    echo "private-keyring: processes $remaining did not end" >&2
}

# Polls for up to 5 s until processes $@ have ended: succeeds (printing the ones left) when some
# are still there, fails when none is.
still_alive_after_5s() {
    local pid remaining
    for _ in $(seq 1 100); do
        remaining=""
        for pid in "$@"; do alive "$pid" && remaining="$remaining $pid"; done
        [ -z "$remaining" ] && return 1
        sleep 0.05
    done
    echo $remaining
}

# Stops everything of the bus in directory $1 (the recorded pids first, then any other process
# of the bus, such as a keyring that never registered) and removes the directory.
stop_all() {
    local dir=$1 pids=""
    for pidfile in keyring.pid bus.pid; do
        [ -f "$dir/$pidfile" ] && pids="$pids $(cat "$dir/$pidfile")"
    done
    # shellcheck disable=SC2086
    stop_processes $pids
    # shellcheck disable=SC2046
    stop_processes $(processes_of "$dir")
    rm -rf "$dir"
}

# Starts a bus in $1; prints its address and pid on two lines.
start_bus() {
    local dir=$1
    mkdir -p "$dir/socket"
    write_bus_config "$dir/bus.conf" "$dir/socket"
    dbus-daemon --config-file="$dir/bus.conf" --fork --print-address=1 --print-pid=1
}

# Daemons must not hold the caller's descriptors open (a caller may wait for their end of a pipe).
close_inherited_descriptors() {
    local fd
    for fd in /proc/$$/fd/*; do
        fd=${fd##*/}
        [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-" 2>/dev/null || true
    done
}

command=${1:-}
shift || true
case "$command" in
run)
    [ $# -gt 0 ] || die "usage: $0 run COMMAND [ARGS...]"
    need dbus-daemon dbus-send gnome-keyring-daemon
    dir=$(mktemp -d "${TMPDIR:-/tmp}/resourceful-keyring.XXXXXX")
    child=""
    trap 'stop_all "$dir"' EXIT
    # A signal ends the command, then the bus and keyring (by the EXIT trap).
    for signal in TERM INT HUP; do
        trap '[ -n "$child" ] && kill -'"$signal"' "$child" 2>/dev/null; trap - '"$signal"'; exit $((128 + $(kill -l '"$signal"')))' "$signal"
    done
    { read -r address; read -r bus_pid; } < <(start_bus "$dir")
    echo "$bus_pid" > "$dir/bus.pid"
    keyring_pid=$(start_keyring "$address" "$dir/home")
    echo "$keyring_pid" > "$dir/keyring.pid"
    status=0
    # In the background (with the caller's standard input), so that a signal is seen at once.
    env -u XDG_RUNTIME_DIR DBUS_SESSION_BUS_ADDRESS="$address" RESOURCEFUL_PRIVATE_KEYRING=1 "$@" <&0 &
    child=$!
    wait "$child" || status=$?
    exit "$status"
    ;;
start)
    dir=${1:-}
    [ -n "$dir" ] || die "usage: $0 start DIR [--no-keyring]"
    need dbus-daemon dbus-send gnome-keyring-daemon
    close_inherited_descriptors
    mkdir -p "$dir"
    # A failure to start leaves nothing running.
    trap 'status=$?; [ "$status" -eq 0 ] || stop_all "$dir"' EXIT
    { read -r address; read -r bus_pid; } < <(start_bus "$dir")
    echo "$address" > "$dir/address"
    echo "$bus_pid" > "$dir/bus.pid"
    keyring_pid=""
    if [ "${2:-}" != "--no-keyring" ]; then
        keyring_pid=$(start_keyring "$address" "$dir/home")
        echo "$keyring_pid" > "$dir/keyring.pid"
    fi
    # End both when the process that started them ends, even if it never calls `stop`.
    owner=$PPID
    ( trap - EXIT
      while kill -0 "$owner" 2>/dev/null && alive "$bus_pid"; do sleep 1; done
      if kill -0 "$owner" 2>/dev/null; then
          # The bus ended (a test stopped it): end the rest, and leave DIR to `stop`.
          stop_processes $(cat "$dir/keyring.pid" 2>/dev/null) $(processes_of "$dir")
      else
          stop_all "$dir"
      fi ) </dev/null >/dev/null 2>&1 &
    echo $! > "$dir/watcher.pid"
    ;;
stop)
    dir=${1:-}
    [ -n "$dir" ] && [ -d "$dir" ] || die "usage: $0 stop DIR"
    if [ -f "$dir/watcher.pid" ]; then kill "$(cat "$dir/watcher.pid")" 2>/dev/null || true; fi
    stop_all "$dir"
    ;;
*)
    die "usage: $0 run COMMAND... | start DIR [--no-keyring] | stop DIR"
    ;;
esac
