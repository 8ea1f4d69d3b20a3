# shellcheck shell=bash
# Sourced by make demo's scripts (demo-exporter, demo-fleet).

# wait_line FILE PATTERN PID: the event waited for is the line a program prints
# once it is ready (printed); PID dying first, or 30 s, is a failure.
wait_line() {
  for _ in $(seq 300); do
    if line=$(grep -m1 "$2" "$1"); then echo "$line"; return 0; fi
    kill -0 "$3" 2>/dev/null || { cat "$1" >&2; return 1; }
    sleep 0.1
  done
  echo "$(basename "$0"): no \"$2\" in $1 within 30 s" >&2
  return 1
}

# http_get ADDR PATH: the body of one GET (bash's /dev/tcp: no curl needed on a
# fresh machine).
http_get() {
  exec 3<>"/dev/tcp/${1%:*}/${1##*:}"
  printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$2" "$1" >&3
  sed '1,/^\r$/d' <&3
  exec 3<&-
}
