#!/bin/bash
# capture-rxe.sh boots one lab guest (Linux 6.12, see lab/prep.sh), creates rxe0 on eth0
# (MAC 52:54:00:0a:00:02, 10.10.0.2/24, the lab client's addresses), prints every file of
# /sys/class/infiniband/rxe0 (GID entries 0-5 only; the table has 1024) and runs the
# package's live tests against that real sysfs. Output: rxe0-linux-6.12.txt beside this
# script. Needs lab/build from lab/prep.sh; about 1 minute of one CPU under TCG.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=$repo/lab/build
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cp -a "$build/initramfs" "$work/root"
(cd "$repo" && CGO_ENABLED=0 go test -c -o "$work/root/bin/rdmastats.test" ./rdmastats)
cat >"$work/root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /tmp /run
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev 2>/dev/null
/bin/busybox mount -t tmpfs tmpfs /tmp
/bin/busybox --install -s /bin
export PATH=/bin:/sbin HOME=/tmp
(sleep 150; echo WATCHDOG; poweroff -f) &
for m in $(cat /lib/modules/order); do insmod /lib/modules/"$m" || echo "insmod $m failed"; done
dmesg -n 1
/bin/iproute2-ip link set eth0 up
/bin/iproute2-ip addr add 10.10.0.2/24 dev eth0 nodad
rdma link add rxe0 type rxe netdev eth0
sleep 2
echo "RDMALAB uname $(uname -r)"
ls -la /sys/class/infiniband/ | sed 's/^/RDMALAB ls /'
ls -la /sys/class/infiniband/rxe0/ | sed 's/^/RDMALAB ls0 /'
ls -la /sys/class/infiniband/rxe0/ports/1/ | sed 's/^/RDMALAB ls1 /'
echo "RDMALAB ngids $(ls /sys/class/infiniband/rxe0/ports/1/gids | wc -l)"
cd /sys/class/infiniband/rxe0/
find . -type f | sort | while read -r f; do
	case "$f" in
	./ports/1/gids/* | ./ports/1/gid_attrs/*/*)
		i=${f##*/}
		[ "$i" -lt 6 ] 2>/dev/null || continue ;;
	esac
	v=$(cat "$f" 2>&1 | tr '\n' '|')
	echo "RDMALAB F $f :: $v"
done
cd /
rdma statistic show link rxe0/1 | sed 's/^/RDMALAB stat /'
cd /tmp && /bin/rdmastats.test -test.run Live -test.v 2>&1 | sed 's/^/RDMALAB test /'
echo RDMALAB DONE
poweroff -f
INIT
chmod +x "$work/root/init"
(cd "$work/root" && find . | cpio -o -H newc 2>/dev/null | gzip -1 >"$work/initrd.gz")

timeout 170 qemu-system-x86_64 -machine accel=tcg -cpu qemu64 -m 1024 -smp 1 \
	-nodefaults -no-user-config -display none -no-reboot \
	-kernel "$build/vmlinuz" -initrd "$work/initrd.gz" \
	-append "console=ttyS0 panic=-1 loglevel=4 no_timer_check" \
	-serial "file:$work/console.txt" \
	-netdev socket,id=n0,udp=127.0.0.1:47911,localaddr=127.0.0.1:47910 \
	-device virtio-net-pci,netdev=n0,mac=52:54:00:0a:00:02 >"$work/qemu.log" 2>&1

grep -a "RDMALAB test" "$work/console.txt" | tr -d '\r'
grep -aq "RDMALAB test PASS" "$work/console.txt" || { echo "live tests did not pass in the guest" >&2; exit 1; }
grep -a "RDMALAB" "$work/console.txt" | tr -d '\r' | grep -v "RDMALAB test\|RDMALAB DONE" |
	sed 's/^RDMALAB //' >"$here/rxe0-linux-6.12.txt"
