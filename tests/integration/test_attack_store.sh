#!/bin/sh
# test_attack_store.sh - issue 21 item 11: a damaged store is never taken
# silently.  Pages of a stopped droverd's store overwritten with garbage:
# droverd refuses to start, naming the file, the damage and the recovery
# steps (droverd --check-store says the same).  The WAL deleted after
# acknowledged submits (droverd killed -9 first), then garbage over a WAL:
# on restart no job id is handed out twice.  An emptied store file: refused without --init, and
# with it the ids still go on.  Another application's database: refused.
# `drover admin backup FILE` by an operator (a real unprivileged user made
# operator) gives a file owned by that user that opens and holds the jobs,
# and restoring it brings them back; a user who is not an operator is
# refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/users_lib.sh"
command -v sqlite3 >/dev/null 2>&1 || {
    echo "SKIP: needs the sqlite3 shell"
    exit 77
}
tu_init || exit 77
tu_add alice || exit 1
tu_add bob || exit 1
cd "$T" || exit 1
DB="$CL_STATE/droverd.db"
cl_conf <<CONF
NodeName=n1 Gpus=H100-SXM:4 Cpus=8 MemGB=64
CONF
OPS="--operator $TU_NAME_alice"

# try_start [ARGS]: droverd in the foreground for at most 5 s; its exit
# status (124: it was still running, i.e. it took the store) and its
# output in $T/try.log
try_start() {
    timeout 5 "$DROVERD" -c "$T/cluster.conf" --state "$CL_STATE" --listen "127.0.0.1:$CL_PORT" \
        --agent-listen "127.0.0.1:$CL_APORT" --socket "$DROVER_SERVER" --key "$CL_KEY" \
        $OPS "$@" >"$T/try.log" 2>&1
}
stop_droverd() {
    kill -TERM "$CL_DPID" 2>/dev/null
    wait "$CL_DPID" 2>/dev/null
}
submit_n() { # N: submit N jobs (pending: no agent), their ids on stdout
    i=0
    while [ $i -lt "$1" ]; do
        "$DROVER" submit --parsable -- true || return 1
        i=$((i + 1))
    done
}

cl_droverd $OPS || { bad "droverd start"; finish; }
submit_n 150 >"$T/ids1" || bad "submits"
[ "$(wc -l <"$T/ids1")" = 150 ] && ok "150 jobs submitted" || bad "submitted $(wc -l <"$T/ids1")"

# --- backup: an operator (alice, unprivileged) gets a file of her own
as_user alice "$DROVER" admin backup "$T/home/alice/store.bak" >"$T/bk.out" 2>&1
rc=$?
BK="$T/home/alice/store.bak"
if [ $rc -eq 0 ] && [ -f "$BK" ]; then
    ok "operator alice made a backup"
else
    bad "alice's backup: rc $rc $(cat "$T/bk.out")"
fi
[ "$(stat -c '%u %a' "$BK" 2>/dev/null)" = "$TU_UID_alice 600" ] &&
    ok "the backup is written by alice's own process: owned by her, mode 0600" ||
    bad "backup owner/mode: $(stat -c '%U %a' "$BK" 2>&1)"
n=$(sqlite3 "$BK" "PRAGMA integrity_check; SELECT COUNT(*) FROM jobs;" 2>&1 | tr '\n' ' ')
[ "$n" = "ok 150 " ] && ok "the backup opens, is whole and holds the 150 jobs" || bad "backup holds: $n"
# bob is no operator: refused, and nothing is written
as_user bob "$DROVER" admin backup "$T/home/bob/store.bak" >"$T/bk.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "only an operator" "$T/bk.out" && [ ! -e "$T/home/bob/store.bak" ]; then
    ok "bob (not an operator) is refused a backup, no file left"
else
    bad "bob's backup: rc $rc $(cat "$T/bk.out")"
fi
# a backup never writes through an existing name (a symlink planted in a shared directory)
ln -s /etc/drover-test-never "$T/home/alice/link.bak" && chown -h "$TU_NAME_alice" "$T/home/alice/link.bak"
as_user alice "$DROVER" admin backup "$T/home/alice/link.bak" >"$T/bk.out" 2>&1
[ $? -ne 0 ] && [ ! -e /etc/drover-test-never ] && ok "a backup never follows a symlink" ||
    bad "backup through a symlink: $(cat "$T/bk.out")"
rm -f /etc/drover-test-never

# --- the WAL lost after acknowledged submits: no id handed out twice
submit_n 5 >"$T/ids2" || bad "submits before the crash"
cl_kill9_droverd
rm -f "$DB-wal"
cl_droverd $OPS || { bad "droverd restart after the WAL was lost"; finish; }
submit_n 5 >"$T/ids3" || bad "submits after the crash"
dup=$(sort "$T/ids1" "$T/ids2" "$T/ids3" | uniq -d | tr '\n' ' ')
[ -z "$dup" ] && [ "$(cat "$T/ids3" | wc -l)" = 5 ] &&
    ok "after the WAL was lost no id was handed out twice (new: $(tr '\n' ' ' <"$T/ids3"))" ||
    bad "ids handed out twice after the WAL was lost: $dup"
ep=$(curl -s --unix-socket "$DROVER_SERVER" http://x/v1/ping | jq -r .epoch)
[ "${ep:-0}" -ge 2 ] && ok "the epoch went on ($ep)" || bad "epoch after the WAL was lost: $ep"
# the same with a damaged WAL (SQLite drops its frames from the first bad
# checksum on, silently): garbage over all but its first frames
submit_n 5 >"$T/ids2b" || bad "submits before the second crash"
cl_kill9_droverd
wal=$(stat -c %s "$DB-wal" 2>/dev/null || echo 0)
dd if=/dev/urandom of="$DB-wal" bs=1 seek=$((wal / 4)) count=$((wal - wal / 4)) conv=notrunc 2>/dev/null
cl_droverd $OPS || { bad "droverd restart after the WAL was damaged"; finish; }
lost=0
for j in $(cat "$T/ids2b"); do "$DROVER" show "$j" >/dev/null 2>&1 || lost=$((lost + 1)); done
echo "note: the damaged WAL took $lost of the 5 acknowledged submits with it"
submit_n 5 >"$T/ids3b" || bad "submits after the second crash"
cat "$T/ids2b" >>"$T/ids2"
cat "$T/ids3b" >>"$T/ids3"
dup=$(sort "$T/ids1" "$T/ids2" "$T/ids3" | uniq -d | tr '\n' ' ')
[ -z "$dup" ] && [ "$wal" -gt 0 ] &&
    ok "after the WAL was damaged no id was handed out twice (new: $(tr '\n' ' ' <"$T/ids3b"))" ||
    bad "ids handed out twice after the WAL was damaged (WAL $wal bytes): $dup"

# --- restore the backup (the documented steps): the 150 jobs are back,
# and the ids handed out since it was made are not handed out again
stop_droverd
rm -f "$DB" "$DB-wal" "$DB-shm"
cp "$BK" "$DB"
cl_droverd $OPS || { bad "droverd start on the restored backup"; finish; }
first=$(head -1 "$T/ids1")
[ "$(job_field "$first" state)" = pending ] && ok "the restored store holds job $first" ||
    bad "job $first after the restore: $("$DROVER" show "$first" 2>&1 | head -2)"
submit_n 3 >"$T/ids4" || bad "submits after the restore"
dup=$(sort "$T/ids1" "$T/ids2" "$T/ids3" "$T/ids4" | uniq -d | tr '\n' ' ')
[ -z "$dup" ] && ok "after the restore no id was handed out twice" || bad "ids reused after the restore: $dup"

# --- damaged pages: refused with the file, the damage and the way back
stop_droverd
pages=$(($(stat -c %s "$DB") / 4096))
dd if=/dev/urandom of="$DB" bs=4096 seek=$((pages / 2)) count=8 conv=notrunc 2>/dev/null
try_start
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "store $DB is damaged" "$T/try.log" &&
    grep -q "restore the last backup" "$T/try.log" && grep -q "sqlite3 .*\.recover" "$T/try.log"; then
    ok "a store with damaged pages is refused: $(head -1 "$T/try.log" | cut -c1-120)"
else
    bad "damaged store: rc $rc $(head -c 400 "$T/try.log")"
fi
"$DROVERD" --check-store --state "$CL_STATE" >"$T/chk.log" 2>&1
[ $? = 1 ] && grep -q "is damaged" "$T/chk.log" && ok "droverd --check-store says it is damaged" ||
    bad "--check-store on the damaged store: $(head -c 300 "$T/chk.log")"
# the way back the message gives: the backup
rm -f "$DB" "$DB-wal" "$DB-shm"
cp "$BK" "$DB"
"$DROVERD" --check-store --state "$CL_STATE" >"$T/chk.log" 2>&1 && grep -q "ok" "$T/chk.log" &&
    ok "the restored backup checks whole" || bad "--check-store on the backup: $(cat "$T/chk.log")"

# --- an emptied store file: refused without --init; with it, ids go on
: >"$DB"
try_start
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "empty" "$T/try.log" && grep -q -- "--init" "$T/try.log" &&
    ok "an empty store file is refused without --init" || bad "empty store: rc $rc $(head -c 300 "$T/try.log")"
rm -f "$DB"
try_start
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "droverd.seq says a store was here" "$T/try.log" &&
    ok "a deleted store (droverd.seq remembers it) is refused without --init" ||
    bad "deleted store: rc $rc $(head -c 300 "$T/try.log")"
sqlite3 "$DB" "CREATE TABLE accounts(x); INSERT INTO accounts VALUES(1);"
try_start --init
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "not a drover store" "$T/try.log" &&
    [ "$(sqlite3 "$DB" "SELECT group_concat(name) FROM sqlite_master")" = accounts ] &&
    ok "another application's database is refused, even with --init, and left untouched" ||
    bad "foreign store: rc $rc $(head -c 300 "$T/try.log")"
rm -f "$DB"
: >"$DB"
cl_droverd $OPS --init || { bad "droverd --init on the empty file"; finish; }
submit_n 1 >"$T/ids5"
max=$(sort -n "$T/ids1" "$T/ids2" "$T/ids3" "$T/ids4" | tail -1)
[ "$(cat "$T/ids5")" -gt "$max" ] && ok "--init starts a new store whose ids go on ($(cat "$T/ids5") > $max)" ||
    bad "--init: id $(cat "$T/ids5") after $max"
finish
