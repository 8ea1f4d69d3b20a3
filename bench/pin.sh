# shellcheck shell=bash
# Sourced by the bench scripts.
#
# pinned_after CPU: the CPUs that a process pinned to CPU may use 1.5 s
# later (a process that re-pins others would spoil a pinned run).
pinned_after() {
	local p
	taskset -c "$1" sleep 2 &
	p=$!
	sleep 1.5
	sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$p/status"
	wait "$p"
}
