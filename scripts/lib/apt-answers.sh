# shellcheck shell=bash
# apt-cache's answers, kept until apt's state changes.  A host that keeps
# no binary package cache (Dir::Cache::pkgcache "", as Debian's container
# images and this project's machines do) reads every package list again
# for each apt-cache call: about 1 s here, and a guest boot asked 4 to 10
# of them to check that its image is current (5 to 10 s a boot, some 70
# boots in the test command).
#
#   . scripts/lib/apt-answers.sh
#   apt_cache ARGS...   apt-cache ARGS: its output, from
#                       $H3100_CACHE/apt-answers when the same question
#                       was asked of the same state; a failed call is not
#                       kept (its status is returned)
#
# The state is the names, sizes and times of apt's configuration, the
# host's lists and dpkg status, and of the files a Dir:: option in ARGS
# names (a private suite's lists and sources, scripts/lib/private-apt.sh).
# Needs lib.sh.

# apt_state ARGS...: what an answer to ARGS was read from
apt_state() {
    local a p
    stat -c '%n %s %y' /etc/apt /etc/apt/* /etc/apt/*/* /var/lib/apt/lists \
        /var/lib/apt/lists/* /var/lib/dpkg/status 2>/dev/null
    for a in "$@"; do
        case $a in
        Dir::*=*) p=${a#*=}; stat -c '%n %s %y' "$p" "$p"/* 2>/dev/null ;;
        esac
    done
    return 0
}

apt_cache() {
    local dir=$H3100_CACHE/apt-answers key
    key=$({ printf '%s\n' "$@"; apt_state "$@"; } | sha256sum | cut -c1-24)
    if [ ! -f "$dir/$key" ]; then
        mkdir -p "$dir"
        # answers about a state that has changed since are not asked again
        find "$dir" -type f -mtime +1 -delete 2>/dev/null || true
        apt-cache "$@" >"$dir/$key.$$" || {
            set -- $?
            rm -f "$dir/$key.$$"
            return "$1"
        }
        mv "$dir/$key.$$" "$dir/$key"
    fi
    cat "$dir/$key"
}
