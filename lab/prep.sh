#!/usr/bin/env bash
# Host-side preparation for the lab, sourced by lab/run: packages, guest kernel, modules,
# static binaries, initramfs. Everything it makes lives under $BUILD (git-ignored) and is
# reused when present, so a second run only rebuilds what changed.
set -euo pipefail

# need_tools installs what is missing with apt, from the machine's own apt sources.
need_tools() {
	local -A pkg_of=(
		[qemu-system-x86_64]=qemu-system-x86 [tshark]=tshark [capinfos]=wireshark-common [busybox]=busybox-static [cpio]=cpio
		[modprobe]=kmod [depmod]=kmod [xz]=xz-utils [zstd]=zstd [ip]=iproute2 [rdma]=iproute2 [tc]=iproute2
		[mergecap]=wireshark-common [editcap]=wireshark-common [jq]=jq [dpkg-deb]=dpkg [timeout]=coreutils [file]=file
		# Debian's Go is older than go.mod wants; with GOTOOLCHAIN=auto (the default) it
		# fetches the right toolchain through the module proxy.
		[go]=golang-go
	)
	# The 7.3 lab also builds and loads a BPF program (the handshake controller of
	# e2e-hsctrl): clang -target bpf, libbpf's headers, bpftool for the guest.
	if [ "${KERNEL:-6.12}" = 7.3 ]; then
		pkg_of+=([clang]=clang [llvm-objdump]=llvm [bpftool]=bpftool)
	fi
	local missing=() tool
	[ "${KERNEL:-6.12}" != 7.3 ] || [ -e /usr/include/bpf/bpf_helpers.h ] || missing+=(libbpf-dev)
	for tool in "${!pkg_of[@]}"; do
		if ! PATH="$PATH:/usr/sbin:/sbin" command -v "$tool" >/dev/null 2>&1; then
			missing+=("${pkg_of[$tool]}")
		fi
	done
	# busybox from a non-static build cannot run in the initramfs.
	if ! file -L "$(command -v busybox 2>/dev/null || echo /nonexistent)" 2>/dev/null | grep -q 'statically linked'; then
		missing+=(busybox-static)
	fi
	[ ${#missing[@]} -eq 0 ] && return 0
	mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
	log "installing with apt: ${missing[*]}"
	[ "$(id -u)" -eq 0 ] || cannot_run "missing ${missing[*]} and not root: cannot apt-get install"
	timeout 300 apt-get update -qq || cannot_run "apt-get update failed (no network to the archive?)"
	DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" file || cannot_run "apt-get install ${missing[*]} failed"
}

# archive_source prints "URI KEYRING" of the host's Debian archive (the entry carrying the
# bookworm suite), from deb822 .sources or a one-line sources.list. No host is written here:
# whatever mirror the machine uses is the one the lab uses.
archive_source() {
	local f uri="" key="" suites="" line
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		# deb822 stanzas are separated by blank lines.
		while IFS= read -r line || [ -n "$line" ]; do
			case "$line" in
			URIs:*) read -r uri _ <<<"${line#URIs:}" ;;
			Suites:*) suites=${line#Suites:} ;;
			Signed-By:*) read -r key _ <<<"${line#Signed-By:}" ;;
			"")
				if [[ " $suites " == *" $SUITE_BASE "* ]] && [ -n "$uri" ]; then
					echo "$uri" "$key"
					return 0
				fi
				uri="" key="" suites=""
				;;
			esac
		done < <(cat "$f"; echo)
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		line=$(grep -E "^deb +(\[[^]]*\] +)?[a-z]+://[^ ]+ +$SUITE_BASE +" "$f" | head -1 || true)
		if [ -n "$line" ]; then
			line=$(sed -E 's/^deb +(\[[^]]*\] +)?//' <<<"$line")
			echo "${line%% *}" ""
			return 0
		fi
	done
	return 1
}

# fetch_kernel downloads the newest linux-image-*-amd64 that bookworm-backports'
# linux-image-amd64 depends on, with a private apt configuration under $BUILD/apt so the
# host's apt state is never touched.
fetch_kernel() {
	local apt="$BUILD/apt" src uri key
	if ls "$BUILD"/kernel/linux-image-*.deb >/dev/null 2>&1; then
		return 0
	fi
	src=$(archive_source) || cannot_run "no Debian $SUITE_BASE archive in the host's apt sources"
	read -r uri key <<<"$src"
	mkdir -p "$apt/lists/partial" "$apt/cache/partial" "$apt/parts" "$apt/prefs" "$BUILD/kernel"
	: >"$apt/status"
	local opt="[arch=amd64${key:+ signed-by=$key}]"
	echo "deb $opt $uri $SUITE_BASE-backports main" >"$apt/sources.list"
	APTOPTS=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/parts"
		-o "Dir::Etc::Preferences=$apt/prefs/none" -o "Dir::Etc::PreferencesParts=$apt/prefs"
		-o "Dir::State::Lists=$apt/lists" -o "Dir::State::status=$apt/status"
		-o "Dir::Cache=$apt/cache" -o "Dir::Cache::Archives=$apt/cache"
		-o "APT::Architecture=amd64" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")
	log "apt (private config): $SUITE_BASE-backports index"
	timeout 300 apt-get "${APTOPTS[@]}" -qq update || cannot_run "private apt-get update failed (no network to the archive?)"
	local dep
	dep=$(timeout 60 apt-cache "${APTOPTS[@]}" depends linux-image-amd64 |
		awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
	[ -n "$dep" ] || cannot_run "linux-image-amd64 in $SUITE_BASE-backports has no linux-image-* dependency"
	log "kernel package: $dep"
	(cd "$BUILD/kernel" && timeout 600 apt-get "${APTOPTS[@]}" -qq download "$dep") ||
		cannot_run "download of $dep failed"
}

# prepare_kernel makes the guests' kernel ($KERNEL) ready: VMLINUZ, the modules the
# initramfs loads (MODDIR; none for 7.3, where SMC is built in), INITRD, KVER, and how long
# a kernel build took (KERNEL_BUILD_SECS, 0 when cached).
prepare_kernel() {
	KERNEL_BUILD_SECS=0
	INITRD="$BUILD/initramfs-$KERNEL.cpio.gz"
	case "$KERNEL" in
	6.12)
		fetch_kernel
		extract_kernel
		VMLINUZ="$BUILD/vmlinuz" MODDIR="$BUILD/modules"
		;;
	7.3)
		local t=$SECONDS dir rc=0
		dir=$("$LAB/kernel/build.sh") || rc=$?
		[ $rc = 3 ] && exit 3 # CANNOT RUN, said on stderr
		[ $rc = 0 ] || die "lab/kernel/build.sh failed (rc $rc)"
		KERNEL_BUILD_SECS=$((SECONDS - t))
		VMLINUZ="$dir/bzImage" KVER=$(cat "$dir/release") MODDIR="$BUILD/modules-none"
		KDIR=$dir
		rm -rf "$MODDIR" && mkdir -p "$MODDIR" && : >"$MODDIR/order"
		;;
	esac
}

# extract_kernel unpacks vmlinuz and the modules the guest needs, in load order, .ko
# decompressed (busybox insmod reads plain ELF only).
extract_kernel() {
	local deb root kver
	deb=$(ls "$BUILD"/kernel/linux-image-*.deb | sort -V | tail -1)
	root="$BUILD/kernel/root"
	if [ ! -f "$BUILD/kernel/stamp" ] || [ "$deb" -nt "$BUILD/kernel/stamp" ]; then
		rm -rf "$root"
		timeout 300 dpkg-deb -x "$deb" "$root" || die "dpkg-deb -x $deb failed"
		touch "$BUILD/kernel/stamp"
	fi
	kver=$(ls "$root/lib/modules" | head -1)
	KVER=$kver
	cp "$root/boot/vmlinuz-$kver" "$BUILD/vmlinuz"
	timeout 120 depmod -b "$root" "$kver" || die "depmod failed"
	# crc32_generic is no declared dependency of rdma_rxe, but rxe needs the crc32 shash for
	# the ICRC and nothing can auto-load modules in the initramfs.
	# sch_netem: the lossy and silent-link scenarios impair a guest's RoCE netdev with tc.
	rm -rf "$BUILD/modules" && mkdir -p "$BUILD/modules"
	module_order "$root" "$kver" order crc32_generic failover net_failover virtio_net ib_core ib_uverbs \
		udp_tunnel ip6_udp_tunnel rdma_rxe smc smc_diag sch_netem
	# The erspan scenario loads these itself (scenarios.sh erspan_client): ip_gre's
	# fallback devices (gre0, gretap0, erspan0) stay out of every other guest.
	module_order "$root" "$kver" order-erspan ip_gre sch_ingress cls_u32 act_mirred
	for m in crc32_generic rdma_rxe smc smc_diag virtio_net; do
		grep -qx "$m.ko" "$BUILD/modules/order" || die "module $m not found in $deb"
	done
}

# module_order ROOT KVER LIST MODULE... unpacks MODULE... and what they depend on into
# $BUILD/modules (.ko decompressed) and appends their names, in load order, to the file
# LIST there; a module an earlier list holds is left out.
module_order() {
	local root=$1 kver=$2 list=$3 m f kind name base order=()
	shift 3
	for m in "$@"; do
		while read -r kind f _; do
			[ "$kind" = insmod ] && order+=("$f")
		done < <(modprobe -d "$root" -S "$kver" --show-depends "$m" 2>/dev/null || true)
	done
	touch "$BUILD/modules/$list"
	for f in "${order[@]}"; do
		base=$(basename "$f")
		name=${base%%.ko*}.ko
		[ -e "$BUILD/modules/$name" ] && continue
		case "$f" in
		*.xz) xz -dc "$f" >"$BUILD/modules/$name" ;;
		*.zst) zstd -qdc "$f" >"$BUILD/modules/$name" ;;
		*) cp "$f" "$BUILD/modules/$name" ;;
		esac
		echo "$name" >>"$BUILD/modules/$list"
	done
}

# build_binaries builds the guest programs statically. smcping (the traffic) and smclab
# (the kernel's view) must build, every scenario uses them; smcdump, smctop and the live
# test binaries are needed by the e2e scenarios only (which check that they exist).
build_binaries() {
	mkdir -p "$BUILD/bin"
	rm -f "$BUILD"/bin/*
	local pkg name
	for pkg in ./cmd/smcping ./lab/guest/smclab ./cmd/smcdump ./cmd/smctop; do
		name=$(basename "$pkg")
		if ! (cd "$REPO" && CGO_ENABLED=0 timeout 600 go build -trimpath -o "$BUILD/bin/$name" "$pkg") >"$BUILD/bin/$name.build.log" 2>&1; then
			rm -f "$BUILD/bin/$name"
			{ [ "$name" = smcdump ] || [ "$name" = smctop ]; } || die "go build $pkg failed (CGO_ENABLED=0), see $BUILD/bin/$name.build.log"
			log "note: $pkg does not build (CGO_ENABLED=0), see $BUILD/bin/$name.build.log"
			continue
		fi
		rm -f "$BUILD/bin/$name.build.log"
	done
	# The tests that need a kernel with SMC and an RDMA device run in the e2e-smc guest
	# (TestLive*); lab/e2e_test.go fails when they are missing or skip.
	for pkg in ./smcnl ./rdmastats; do
		name=$(basename "$pkg").test
		if ! (cd "$REPO" && CGO_ENABLED=0 timeout 600 go test -c -trimpath -o "$BUILD/bin/$name" "$pkg") >"$BUILD/bin/$name.build.log" 2>&1; then
			rm -f "$BUILD/bin/$name"
			log "note: go test -c $pkg failed (CGO_ENABLED=0), see $BUILD/bin/$name.build.log"
			continue
		fi
		rm -f "$BUILD/bin/$name.build.log"
	done
	build_host_smcdump
}

# build_host_smcdump: the host verifies the wire with the same smcdump.
build_host_smcdump() {
	rm -f "$BUILD/host-smcdump"
	if ls "$REPO"/cmd/smcdump/*.go >/dev/null 2>&1; then
		(cd "$REPO" && timeout 600 go build -o "$BUILD/host-smcdump" ./cmd/smcdump) >/dev/null 2>&1 ||
			rm -f "$BUILD/host-smcdump"
	fi
}

# build_hsctrl compiles the lab's BPF handshake controller (lab/guest/hsctrl, a struct_ops
# smc_hs_ctrl) for the 7.3 guests: clang -target bpf against the BTF of the kernel they boot
# (vmlinux.h in the kernel cache, written by lab/kernel/build.sh) and libbpf-dev's headers.
# HSCTRL_OBJ is the object, empty when there is none (6.12 has no smc_hs_ctrl; without
# vmlinux.h it cannot be built): e2e-hsctrl then fails saying so, the rest runs.
build_hsctrl() {
	HSCTRL_OBJ=""
	[ "$KERNEL" = 7.3 ] || return 0
	local out="$BUILD/bpf"
	rm -rf "$out" && mkdir -p "$out"
	if [ ! -s "$KDIR/vmlinux.h" ]; then
		log "note: no vmlinux.h in $KDIR (lab/kernel/build.sh writes it with bpftool): the handshake controller cannot be built"
		echo "no vmlinux.h in $KDIR" >"$out/build.log"
		return 0
	fi
	if ! timeout 300 clang -g -O2 -Wall -Wno-missing-declarations -target bpf -D__TARGET_ARCH_x86 -I "$KDIR" \
		-c "$LAB/guest/hsctrl/hsctrl.bpf.c" -o "$out/hsctrl.bpf.o" >"$out/build.log" 2>&1; then
		log "note: clang -target bpf lab/guest/hsctrl/hsctrl.bpf.c failed, see $out/build.log"
		rm -f "$out/hsctrl.bpf.o"
		return 0
	fi
	HSCTRL_OBJ="$out/hsctrl.bpf.o"
}

# copy_with_libs copies a dynamically linked host binary and its libraries into root $1.
copy_with_libs() {
	local root=$1 src=$2 dst=$3 lib
	install -D -m 0755 "$src" "$root$dst"
	for lib in $(ldd "$src" 2>/dev/null | grep -oE '/[^ ]+\.so[^ ]*' | sort -u); do
		[ -e "$root$lib" ] || install -D -m 0755 "$(readlink -f "$lib")" "$root$lib"
	done
}

build_initramfs() {
	local root="$BUILD/initramfs" bb ip rdma
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,lib/modules,lab,etc,proc,sys,dev,tmp,out}
	bb=$(command -v busybox)
	file -L "$bb" | grep -q 'statically linked' || die "$bb is not static (install busybox-static)"
	install -m 0755 "$bb" "$root/bin/busybox"
	ip=$(PATH="$PATH:/usr/sbin:/sbin" command -v ip)
	rdma=$(PATH="$PATH:/usr/sbin:/sbin" command -v rdma)
	copy_with_libs "$root" "$ip" /bin/iproute2-ip
	copy_with_libs "$root" "$rdma" /bin/rdma
	# iproute2's tc (netem) for the scenarios that impair the RoCE path; busybox has
	# no tc applet that knows netem.
	copy_with_libs "$root" "$(PATH="$PATH:/usr/sbin:/sbin" command -v tc)" /bin/iproute2-tc
	# util-linux's setpriv (busybox's cannot change the user): smctop run as the systemd
	# unit runs it, unprivileged with two ambient capabilities (lab/smctop_e2e_test.go).
	copy_with_libs "$root" "$(PATH="$PATH:/usr/sbin:/sbin" command -v setpriv)" /bin/util-setpriv
	# bench-sockperf: Debian's sockperf, and lab/guest/smcpreload (LD_PRELOAD: its TCP
	# sockets become AF_SMC ones) built with the host's gcc. Without sockperf on the host
	# that scenario says so; nothing else needs them.
	if command -v sockperf >/dev/null 2>&1; then
		copy_with_libs "$root" "$(command -v sockperf)" /bin/sockperf
		timeout 120 gcc -shared -fPIC -O2 -Wall -o "$root/lib/smcpreload.so" "$LAB/guest/smcpreload/smcpreload.c" -ldl ||
			log "note: gcc could not build lab/guest/smcpreload: bench-sockperf cannot run"
	fi
	install -m 0755 "$LAB/guest/init" "$root/init"
	install -m 0644 "$LAB/guest/scenarios.sh" "$root/lab/scenarios.sh"
	if [ -n "${HSCTRL_OBJ:-}" ]; then
		# bpftool registers the controller in the guest (struct_ops register).
		copy_with_libs "$root" "$(PATH="$PATH:/usr/sbin:/sbin" command -v bpftool)" /bin/bpftool
		install -m 0644 "$HSCTRL_OBJ" "$root/lab/hsctrl.bpf.o"
	elif [ "$KERNEL" = 7.3 ]; then
		cp "$BUILD/bpf/build.log" "$root/lab/hsctrl.missing"
	fi
	cp "$MODDIR/order" "$root/lib/modules/"
	[ ! -e "$MODDIR/order-erspan" ] || cp "$MODDIR/order-erspan" "$root/lib/modules/"
	if ls "$MODDIR"/*.ko >/dev/null 2>&1; then
		cp "$MODDIR"/*.ko "$root/lib/modules/"
	fi
	local b
	for b in "$BUILD"/bin/*; do
		case "$b" in *.log) continue ;; esac
		install -m 0755 "$b" "$root/bin/"
	done
	echo "root:x:0:0:root:/tmp:/bin/sh" >"$root/etc/passwd"
	(cd "$root" && find . | LC_ALL=C sort | timeout 120 cpio -o -H newc --quiet | gzip -1 >"$INITRD") ||
		die "initramfs build failed"
}

# choose_accel: /dev/kvm on a PVM host (kvm_pvm) cannot boot a stock kernel, so TCG is the
# default there; elsewhere KVM is used when it answers a probe boot.
choose_accel() {
	ACCEL=${LAB_ACCEL:-}
	if [ -z "$ACCEL" ]; then
		if [ -d /sys/module/kvm_pvm ] || [ ! -w /dev/kvm ]; then
			ACCEL=tcg
		elif timeout 40 qemu-system-x86_64 -accel kvm -cpu host -m 512 -nodefaults -no-user-config \
			-display none -no-reboot -kernel "$VMLINUZ" -initrd "$INITRD" \
			-append "console=ttyS0 panic=-1 lab.scen=probe lab.role=probe" -serial stdio 2>/dev/null |
			grep -q 'LAB-PROBE-OK'; then
			ACCEL=kvm
		else
			ACCEL=tcg
		fi
	fi
	case "$ACCEL" in
	kvm) ACCEL_ARGS=(-accel kvm -cpu host) ;;
	*) ACCEL_ARGS=(-accel tcg) ;;
	esac
}
