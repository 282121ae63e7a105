# shellcheck shell=bash
# A private apt configuration for one Debian suite: its package lists and
# downloads live in $H3100_CACHE/apt/SUITE/, the host's apt sources, lists
# and packages are not touched, and nothing is ever installed (packages are
# downloaded and unpacked with dpkg-deb -x).  Used for what the guests
# carry from other releases than the host's: bullseye's 5.10 kernel and
# nvme-cli 1.12, trixie-backports' newest kernel, sid's nvme-cli.
#
#   . scripts/lib/private-apt.sh
#   papt_init SUITE          lists fetched when missing or a day old; sets
#                            PAPT_OPTS (apt-get / apt-cache options)
#   papt_download DIR PKG... download into DIR
#   papt_closure PKG...      PKG and every package it depends on (names)
#
# The mirror is the host's Debian mirror (the one its release comes from,
# as apt-cache policy names it), else deb.debian.org.  Signatures are
# checked with the host's Debian archive keyring.  Needs lib.sh.

# shellcheck source=scripts/lib/apt-answers.sh
. "$(dirname "${BASH_SOURCE[0]}")/apt-answers.sh"

PAPT_OPTS=()

# papt_mirror: the host's Debian mirror
papt_mirror() {
    local m
    m=$(apt_cache policy 2>/dev/null | awk '$2 ~ /^https?:\/\// &&
        $3 ~ /^[a-z]+\/main$/ && $3 !~ /-(security|updates|backports)\// {
        print $2; exit }')
    printf '%s\n' "${m:-http://deb.debian.org/debian}"
}

papt_init() {
    local suite=$1 top=$H3100_CACHE/apt/$1 stamp src
    mkdir -p "$top/lists/partial" "$top/cache/archives/partial" "$top/parts"
    # rewritten only when it changes: its time is part of apt_cache's key
    src="deb $(papt_mirror) $suite main"
    [ "$(cat "$top/sources.list" 2>/dev/null)" = "$src" ] ||
        echo "$src" >"$top/sources.list"
    PAPT_OPTS=(-o "Dir::Etc::SourceList=$top/sources.list"
               -o "Dir::Etc::SourceParts=$top/parts"
               -o "Dir::State::Lists=$top/lists"
               -o "Dir::State::Status=$top/status"
               -o "Dir::Cache=$top/cache" -o Debug::NoLocking=1)
    # an empty dpkg status: the dependency closure is the suite's own,
    # not what the host happens to have installed
    : >>"$top/status"
    # as root, apt's _apt user cannot write into our private directories
    [ "$(id -u)" -ne 0 ] || PAPT_OPTS+=(-o APT::Sandbox::User=root)
    stamp=$top/lists/.updated
    if [ -z "$(find "$stamp" -mmin -1440 2>/dev/null)" ]; then
        printf '[private-apt] fetching the package list of %s\n' "$suite" >&2
        apt-get "${PAPT_OPTS[@]}" update >"$top/update.log" 2>&1 ||
            h3100_die "apt-get update for $suite failed: $(tail -1 "$top/update.log")"
        touch "$stamp"
    fi
}

papt_download() {
    local dir=$1
    shift
    mkdir -p "$dir"
    (cd "$dir" && apt-get "${PAPT_OPTS[@]}" download "$@" >/dev/null) ||
        h3100_die "apt-get download $* failed"
}

papt_closure() {
    apt_cache "${PAPT_OPTS[@]}" depends --recurse --no-recommends --no-suggests \
        --no-conflicts --no-breaks --no-replaces --no-enhances "$@" |
        grep -E '^[a-z0-9][a-z0-9.+-]*$' | sort -u
}
