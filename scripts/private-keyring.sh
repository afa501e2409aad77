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
set -euo pipefail

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
    cleanup() {
        [ -n "${keyring_pid:-}" ] && kill "$keyring_pid" 2>/dev/null || true
        [ -n "${bus_pid:-}" ] && kill "$bus_pid" 2>/dev/null || true
        rm -rf "$dir"
    }
    trap cleanup EXIT
    { read -r address; read -r bus_pid; } < <(start_bus "$dir")
    keyring_pid=$(start_keyring "$address" "$dir/home")
    status=0
    env -u XDG_RUNTIME_DIR DBUS_SESSION_BUS_ADDRESS="$address" RESOURCEFUL_PRIVATE_KEYRING=1 "$@" || status=$?
    exit "$status"
    ;;
start)
    dir=${1:-}
    [ -n "$dir" ] || die "usage: $0 start DIR [--no-keyring]"
    need dbus-daemon dbus-send gnome-keyring-daemon
    close_inherited_descriptors
    mkdir -p "$dir"
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
    ( while kill -0 "$owner" 2>/dev/null && kill -0 "$bus_pid" 2>/dev/null; do sleep 1; done
      [ -n "$keyring_pid" ] && kill -CONT "$keyring_pid" 2>/dev/null
      kill "$keyring_pid" "$bus_pid" 2>/dev/null ) </dev/null >/dev/null 2>&1 &
    ;;
stop)
    dir=${1:-}
    [ -n "$dir" ] && [ -d "$dir" ] || die "usage: $0 stop DIR"
    for pidfile in keyring.pid bus.pid; do
        if [ -f "$dir/$pidfile" ]; then
            pid=$(cat "$dir/$pidfile")
            kill -CONT "$pid" 2>/dev/null || true
            kill "$pid" 2>/dev/null || true
        fi
    done
    rm -rf "$dir"
    ;;
*)
    die "usage: $0 run COMMAND... | start DIR [--no-keyring] | stop DIR"
    ;;
esac
