# users_lib.sh - real unprivileged users for the live tests: the attacks of
# issue 21 are run by accounts the test creates, as a site's users would run
# them, never by root pretending.  Sourced after lib.sh and cluster_lib.sh:
#   . "$(dirname "$0")/users_lib.sh"; tu_init (exits 77 itself when it cannot make users)
#
#   tu_init            needs root and useradd: else the test exits 77
#                      (skipped, never passed).  Makes $T traversable (0711:
#                      its files stay private, the users' homes are theirs),
#                      copies the binaries to $T/bin (the build tree may sit
#                      where other users cannot reach) and re-exports
#                      DROVER/DROVER_AGENT/DROVERD to those copies.
#   tu_add NAME        a new account; $T/home/NAME is its home (0700).  Sets
#                      TU_NAME_<NAME> (the login), TU_UID_<NAME>, TU_GID_<NAME>.
#   as_user NAME CMD   run CMD as that user (real, effective and saved ids,
#                      its own groups, a clean environment: HOME, PATH,
#                      DROVER_SERVER, DROVER), from its home.
#   tu_login NAME      the login name of NAME
#
# Logins are drt<pid><name> so that tests running in parallel never share
# one; every account (and each of its processes) is removed on exit, also on
# failure; accounts a killed test left behind are removed by the next tu_init.
TU_USERS=""
TU_LOCK=/run/drover-tests-users.lock

# tu_sweep: remove the accounts of tests that are no longer running
tu_sweep() {
    for u in $(cut -d: -f1 /etc/passwd | grep '^drt[0-9]' || true); do
        pid=$(echo "$u" | sed 's/^drt\([0-9]*\).*/\1/')
        [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && continue
        pkill -KILL -u "$u" 2>/dev/null
        userdel "$u" >/dev/null 2>&1
    done
}

tu_init() {
    if [ "$(id -u)" != 0 ] || ! command -v useradd >/dev/null 2>&1 ||
        ! command -v setpriv >/dev/null 2>&1; then
        echo "SKIP: needs root, useradd and setpriv to create the test's users"
        exit 77
    fi
    (
        flock 9
        tu_sweep
    ) 9>"$TU_LOCK"
    chmod 0711 "$T"
    mkdir -p "$T/bin" "$T/home"
    chmod 0755 "$T/bin"
    chmod 0711 "$T/home"
    for b in "$DROVER" "${DROVER_AGENT:-}" "${DROVERD:-}"; do
        [ -n "$b" ] && [ -x "$b" ] && cp "$b" "$T/bin/" && chmod 0755 "$T/bin/${b##*/}"
    done
    DROVER="$T/bin/${DROVER##*/}"
    [ -n "${DROVER_AGENT:-}" ] && DROVER_AGENT="$T/bin/${DROVER_AGENT##*/}"
    [ -n "${DROVERD:-}" ] && DROVERD="$T/bin/${DROVERD##*/}"
    export DROVER DROVER_AGENT DROVERD
    CL_CLEANUP_HOOKS="${CL_CLEANUP_HOOKS:-} tu_cleanup"
    return 0
}

tu_add() {
    login="drt$$$1"
    if ! (
        flock 9
        useradd --no-create-home --home-dir "$T/home/$1" --shell /bin/sh --user-group "$login"
    ) 9>"$TU_LOCK"; then
        echo "useradd $login failed"
        return 1
    fi
    TU_USERS="$TU_USERS $login"
    mkdir -p "$T/home/$1"
    chown "$login:$login" "$T/home/$1"
    chmod 0700 "$T/home/$1"
    eval "TU_NAME_$1=$login TU_UID_$1=$(id -u "$login") TU_GID_$1=$(id -g "$login")"
}

tu_login() { echo "drt$$$1"; }

as_user() {
    u="$1"
    shift
    login="drt$$$u"
    (cd "$T/home/$u" && setpriv --reuid="$login" --regid="$login" --init-groups \
        env -i HOME="$T/home/$u" USER="$login" LOGNAME="$login" PATH="$T/bin:/usr/bin:/bin" \
        DROVER_SERVER="${DROVER_SERVER:-}" DROVER="$DROVER" LANG=C.UTF-8 "$@")
}

tu_cleanup() {
    for u in $TU_USERS; do pkill -KILL -u "$u" 2>/dev/null; done
    sleep 0.1
    (
        flock 9
        for u in $TU_USERS; do userdel "$u" >/dev/null 2>&1; done
    ) 9>"$TU_LOCK"
    TU_USERS=""
}
