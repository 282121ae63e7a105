# shellcheck shell=bash
# The TAP lines of the shell tests and their tally: source it, then
#
#   ok TEXT            "ok - TEXT", counted as passed
#   bad TEXT           "not ok - TEXT", counted as failed
#   check RC TEXT      ok TEXT if RC is 0, else bad TEXT
#   tap_summary        "N passed, N failed"; true if none failed
#   finish             tap_summary, then exit with its status
#
# pass and fail hold the counts.
pass=0
fail=0
ok()    { pass=$((pass + 1)); echo "ok - $1"; }
bad()   { fail=$((fail + 1)); echo "not ok - $1"; }
check() { if [ "$1" = 0 ]; then ok "$2"; else bad "$2"; fi; }
tap_summary() {
    echo "$pass passed, $fail failed"
    [ "$fail" = 0 ]
}
finish() {
    tap_summary
    exit
}
