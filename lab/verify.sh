#!/usr/bin/env bash
# Verification of one scenario run, sourced by lab/run. Placeholder, extended below.
verify_scenario() {
	local sc=$1 dir=$2 bad=0
	for r in server client; do
		[ "$(cat "$dir/$r/rc" 2>/dev/null)" = 0 ] || { log "$sc: $r rc=$(cat "$dir/$r/rc" 2>/dev/null || echo none)"; bad=1; }
	done
	[ $bad = 0 ]
}
publish_samples() { :; }
