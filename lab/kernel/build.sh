#!/usr/bin/env bash
# lab/kernel/build.sh — the lab's Linux 7.3: Debian's linux-source-7.3 (trixie-backports)
# built with x86_64_defconfig + kvm_guest.config + lab/kernel/smc.config, everything SMC
# needs built in. Debian's own 7.x images leave CONFIG_DIBS unset, so none of them has SMC.
#
#   lab/kernel/build.sh              build (or find) it; print the cache directory
#   lab/kernel/build.sh --background start the build detached when it is not cached (make
#                                    test runs the unit tests meanwhile) and return at once
#   lab/kernel/build.sh --dir        print the cache directory it would use, build nothing
#
# The result is cached OUTSIDE the clone, keyed by the source package's version and the
# hash of smc.config: ${LAB_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/smcscope/kernel}/
# VERSION-HASH/ holds bzImage, config, vmlinux.h (BTF of the kernel, for BPF programs) and
# release. CI runs in a fresh clone on the same machine, so a cache under lab/build would be
# built again by every run. Builds take turns (flock on the cache's .lock): a second
# caller waits for the first and then finds the result.
#
# Needs root (apt), Debian's archive of the host's apt sources (trixie-backports),
# flex, bison, bc, libelf-dev, libssl-dev, dwarves (installed when missing). Exit 3 with
# "lab: CANNOT RUN: <reason>" on stderr when it cannot build here.
set -euo pipefail

LAB=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${LAB_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/smcscope/kernel}
PKG=linux-source-7.3
SUITE=trixie-backports
# A bound on the build alone (48 CPU minutes measured on 2 cores, 29 min quiet); a busy
# machine can take twice that.
BUILD_SECS=${LAB_KERNEL_BUILD_SECS:-5400}

log() { echo "lab: kernel 7.3: $*" >&2; }
die() {
	log "ERROR: $*"
	exit 1
}
cannot_run() {
	echo "lab: CANNOT RUN: $*" >&2
	exit 3
}

# The options the guest cannot do without: checked in the final .config.
REQUIRED=(INFINIBAND RDMA_RXE SMC SMC_DIAG DIBS DIBS_LO SMC_HS_CTRL_BPF BPF_SYSCALL BPF_JIT
	DEBUG_INFO_BTF VIRTIO_NET SERIAL_8250_CONSOLE BLK_DEV_INITRD)

hash=$(sha256sum "$LAB/kernel/smc.config" | cut -c1-12)

# apt_private sets APTOPTS to a private apt configuration for $SUITE (the host's apt state
# is never touched), from the archive URI and keyring of the host's sources.
apt_private() {
	local apt="$CACHE/apt" uri="" key="" f line suites=""
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		while IFS= read -r line || [ -n "$line" ]; do
			case "$line" in
			URIs:*) [ -n "$uri" ] || read -r uri _ <<<"${line#URIs:}" ;;
			Signed-By:*) [ -n "$key" ] || read -r key _ <<<"${line#Signed-By:}" ;;
			Suites:*) suites=${line#Suites:} ;;
			"") [[ "$suites" == *bookworm* || "$suites" == *trixie* ]] && [ -n "$uri" ] && break 2 ;;
			esac
		done < <(cat "$f"; echo)
	done
	if [ -z "$uri" ]; then
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -r "$f" ] || continue
			line=$(grep -E '^deb +(\[[^]]*\] +)?[a-z]+://[^ ]+ +(bookworm|trixie) ' "$f" | head -1 || true)
			[ -n "$line" ] && uri=$(sed -E 's/^deb +(\[[^]]*\] +)?//; s/ .*//' <<<"$line") && break
		done
	fi
	[ -n "$uri" ] || return 1
	mkdir -p "$apt/lists/partial" "$apt/cache/partial" "$apt/parts" "$apt/prefs"
	: >"$apt/status"
	echo "deb [arch=amd64${key:+ signed-by=$key}] $uri $SUITE main" >"$apt/sources.list"
	APTOPTS=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/parts"
		-o "Dir::Etc::Preferences=$apt/prefs/none" -o "Dir::Etc::PreferencesParts=$apt/prefs"
		-o "Dir::State::Lists=$apt/lists" -o "Dir::State::status=$apt/status"
		-o "Dir::Cache=$apt/cache" -o "Dir::Cache::Archives=$apt/cache"
		-o "APT::Architecture=amd64" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")
	timeout 300 apt-get "${APTOPTS[@]}" -qq update
}

# version prints the source package's version, from the index (or the newest .deb cached).
version() {
	local v
	v=$(timeout 60 apt-cache "${APTOPTS[@]}" policy "$PKG" 2>/dev/null | awk '/Candidate:/ {print $2}')
	if [ -z "$v" ] || [ "$v" = "(none)" ]; then
		cannot_run "$PKG is not in $SUITE"
	fi
	echo "$v"
}

need_tools() {
	local missing=() t
	for t in flex bison bc pahole cpio bpftool; do
		command -v "$t" >/dev/null || missing+=("$t")
	done
	[ -e /usr/include/libelf.h ] || missing+=(libelf-dev)
	[ -e /usr/include/openssl/ssl.h ] || missing+=(libssl-dev)
	[ ${#missing[@]} -eq 0 ] && return 0
	local pkgs=()
	for t in "${missing[@]}"; do
		case "$t" in pahole) pkgs+=(dwarves) ;; *) pkgs+=("$t") ;; esac
	done
	[ "$(id -u)" -eq 0 ] || cannot_run "missing ${pkgs[*]} and not root"
	DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null ||
		cannot_run "apt-get install ${pkgs[*]} failed"
}

# build VERSION DIR configures and builds the kernel into DIR (bzImage, config, vmlinux.h,
# release).
build() {
	local ver=$1 dir=$2 deb src obj t0=$SECONDS
	mkdir -p "$CACHE/debs"
	deb=$(ls "$CACHE/debs/${PKG}_${ver}_all.deb" 2>/dev/null || true)
	if [ -z "$deb" ]; then
		(cd "$CACHE/debs" && timeout 900 apt-get "${APTOPTS[@]}" -qq download "$PKG=$ver") || cannot_run "download of $PKG $ver failed"
		deb="$CACHE/debs/${PKG}_${ver}_all.deb"
	fi
	src="$CACHE/src-$ver"
	if [ ! -f "$src/Makefile" ]; then
		rm -rf "$src" "$src.tmp" && mkdir -p "$src.tmp"
		log "unpacking $PKG $ver"
		dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards '*/linux-source-7.3.tar.xz' | tar -xJ -C "$src.tmp" ||
			die "unpacking $deb failed"
		mv "$src.tmp"/linux-source-7.3 "$src" && rm -rf "$src.tmp"
	fi
	obj="$dir.obj"
	rm -rf "$obj" && mkdir -p "$obj"
	make -s -C "$src" O="$obj" x86_64_defconfig >/dev/null
	"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$src/kernel/configs/kvm_guest.config" \
		"$LAB/kernel/smc.config" >"$obj/merge.log" 2>&1 || die "merge_config failed: $obj/merge.log"
	make -s -C "$src" O="$obj" olddefconfig >/dev/null
	local o
	for o in "${REQUIRED[@]}"; do
		grep -qx "CONFIG_$o=y" "$obj/.config" || die "CONFIG_$o is not =y after olddefconfig (a dependency is missing)"
	done
	log "building bzImage in $obj with $(nproc) jobs (about 30 min on 2 cores)"
	timeout "$BUILD_SECS" nice make -C "$src" O="$obj" -j"$(nproc)" bzImage >"$obj/build.log" 2>&1 ||
		die "make bzImage failed or took longer than ${BUILD_SECS}s: tail of $obj/build.log:
$(tail -20 "$obj/build.log")"
	mkdir -p "$dir.tmp"
	cp "$obj/arch/x86/boot/bzImage" "$dir.tmp/bzImage"
	cp "$obj/.config" "$dir.tmp/config"
	make -s -C "$src" O="$obj" kernelrelease >"$dir.tmp/release"
	if command -v bpftool >/dev/null; then
		bpftool btf dump file "$obj/vmlinux" format c >"$dir.tmp/vmlinux.h" || die "bpftool btf dump failed"
	else
		cp "$obj/vmlinux" "$dir.tmp/vmlinux"
	fi
	echo "$((SECONDS - t0))" >"$dir.tmp/build-seconds"
	rm -rf "$dir" && mv "$dir.tmp" "$dir"
	# The object tree is gigabytes of debug info; the source stays for the next build.
	rm -rf "$obj"
	log "built $(cat "$dir/release") in $((SECONDS - t0)) s"
}

main() {
	case "${1:-}" in
	--background)
		[ "$(id -u)" -eq 0 ] || exit 0
		mkdir -p "$CACHE"
		if ls "$CACHE"/*-"$hash"/bzImage >/dev/null 2>&1; then
			exit 0
		fi
		log "building in the background (log: $CACHE/build.log)"
		setsid nohup "$0" >"$CACHE/build.log" 2>&1 </dev/null &
		exit 0
		;;
	--dir | "") ;;
	*) echo "usage: $0 [--background | --dir]" >&2 && exit 2 ;;
	esac
	[ "$(id -u)" -eq 0 ] || cannot_run "not root (apt and the build tools need root)"
	mkdir -p "$CACHE"
	exec 8>"$CACHE/.lock"
	flock -w "$BUILD_SECS" 8 || die "another build holds $CACHE/.lock for more than ${BUILD_SECS}s"
	local ver dir
	if ! apt_private; then
		# No archive now: a kernel built earlier with this config still serves.
		dir=$(ls -d "$CACHE"/*-"$hash" 2>/dev/null | sort -V | tail -1)
		[ -n "$dir" ] && [ -f "$dir/bzImage" ] || cannot_run "apt-get update of $SUITE failed (no network to the archive?) and nothing is cached"
		echo "$dir"
		return 0
	fi
	ver=$(version)
	dir="$CACHE/$ver-$hash"
	if [ "${1:-}" = --dir ]; then
		echo "$dir"
		return 0
	fi
	if [ ! -f "$dir/bzImage" ]; then
		need_tools
		build "$ver" "$dir"
	fi
	echo "$dir"
}

main "$@"
