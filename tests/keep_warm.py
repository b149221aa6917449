"""Keeps the files the suite reads most in the page cache for the length of one run (``scripts/test.sh``
starts it beside pytest and stops it after).

Why: on a machine whose disk serves small random reads slowly and whose kernel pages out file pages left
untouched for a minute (DAMON's ``pageout`` scheme, as on this project's 2-core machines), each of the
suite's processes that imports torch, spaCy and transformers, or maps a model, faults their pages in again,
4 to 8 KB at a time. This maps the same files whole, so that the kernel reads them in large reads at the
run's start, and keeps them resident: locked in memory where this process may lock pages (root, or
``CAP_IPC_LOCK``) and they are at most a quarter of the memory available, else by touching every page again
every ``--every`` seconds. It changes nothing that a test sees: the files are only read.

The files, in the order they are first read: the compiled modules (``.pyc``) and shared libraries of
winellbot's installed dependencies (with its ``dev``, ``local`` and ``server`` extras), the bundled models and
the local editor's unpacked ones, and the browser. A missing file is left out; nothing here fails a run.

    python tests/keep_warm.py --parent PID [--every 30] [--list] [--file PATH ...]
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import mmap
import os
import select
import shutil
import stat
import sys
import time
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PAGE = mmap.PAGESIZE
EXTRAS = ("dev", "local", "server")


def installed_closure(root: str = "winellbot", extras: tuple[str, ...] = EXTRAS) -> list[importlib.metadata.Distribution]:
    """``root`` and every installed distribution it requires, with ``extras`` on ``root``, breadth first."""
    found: dict[str, importlib.metadata.Distribution] = {}
    queue: list[tuple[str, tuple[str, ...]]] = [(root, extras)]
    while queue:
        name, wanted = queue.pop(0)
        if canonicalize_name(name) in found:
            continue
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        found[canonicalize_name(name)] = dist
        for requirement in map(Requirement, dist.requires or []):
            marker = requirement.marker
            if marker is None or any(marker.evaluate({"extra": extra}) for extra in wanted or ("",)):
                queue.append((requirement.name, ()))
    return list(found.values())


def _is_code(name: str) -> bool:
    return name.endswith((".so", ".pyc")) or ".so." in name


def code_files(dists: list[importlib.metadata.Distribution]) -> list[Path]:
    """Each distribution's compiled modules and shared libraries, as its RECORD lists them."""
    files = []
    for dist in dists:
        files += [Path(dist.locate_file(f)) for f in dist.files or [] if _is_code(f.name)]
    return files


def model_files() -> list[Path]:
    """The bundled models' files (those installed), and the local editor's unpacked models."""
    from winellbot import bundled
    from winellbot.llm import local_model
    from winellbot.pipeline import vectors

    folders = []
    for where in (bundled.minilm_dir, bundled.spacy_model_dir, bundled.shared_dir,
                  lambda: bundled.smollm2_gguf().parent, lambda: local_model.UNPACKED):
        try:
            folders.append(where())
        except Exception:  # noqa: BLE001 (a model not installed: nothing of it to keep warm)
            continue
    return [p for folder in folders for p in sorted(Path(folder).rglob("*"))] + [Path(vectors.DEFAULT_PATH)]


def browser_files() -> list[Path]:
    """Debian's chromium (the program behind its wrapper script) and chromedriver."""
    found = [Path("/usr/lib/chromium/chromium")]
    driver = shutil.which("chromedriver")
    return found + ([Path(driver).resolve()] if driver else [])


def warm_list() -> list[Path]:
    """Every file to keep warm, once each (a file by two names too), in the order it is read first."""
    seen, files = set(), []
    for path in code_files(installed_closure()) + model_files() + browser_files():
        try:
            found = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(found.st_mode) and found.st_size and (found.st_dev, found.st_ino) not in seen:
            seen.add((found.st_dev, found.st_ino))
            files.append(path)
    return files


MAP_LOCKED = getattr(mmap, "MAP_LOCKED", 0x2000)  # Linux's value on x86 and arm; Python names it from 3.13


def may_lock(size: int, available: int) -> bool:
    """Whether to lock ``size`` bytes of files in memory when ``available`` bytes are (MemAvailable): only a
    quarter of it at most, since locked pages are not given back under pressure; touched ones are."""
    return size <= available // 4


def available_memory() -> int:
    """MemAvailable, in bytes (0 where /proc/meminfo does not say)."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


def _map(path: Path, lock: bool = True) -> tuple[mmap.mmap, bool] | None:
    """``path`` mapped whole: locked in memory when ``lock`` and the process may lock (its pages then read in at
    once, in large reads, and never paged out), else plain, to be touched. None for a file that cannot be mapped."""
    try:
        with open(path, "rb") as handle:
            if lock:
                with contextlib.suppress(OSError):  # over RLIMIT_MEMLOCK (a user without CAP_IPC_LOCK)
                    return mmap.mmap(handle.fileno(), 0, flags=mmap.MAP_SHARED | MAP_LOCKED | mmap.MAP_POPULATE,
                                     prot=mmap.PROT_READ), True
            mapped = mmap.mmap(handle.fileno(), 0, prot=mmap.PROT_READ)
    except (OSError, ValueError):
        return None
    mapped.madvise(mmap.MADV_SEQUENTIAL)
    return mapped, False


def touch(mapped: list[mmap.mmap]) -> int:
    """Reads one byte of every page: the first time, the kernel reads the file in (in large reads, the
    mapping being sequential); after, it marks each page used. Returns the pages touched."""
    pages = 0
    for m in mapped:
        for offset in range(0, len(m), PAGE):
            m[offset]
        pages += (len(m) + PAGE - 1) // PAGE
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parent", type=int, help="stop when this process has ended")
    parser.add_argument("--every", type=float, default=30.0, help="seconds between touches")
    parser.add_argument("--list", action="store_true", help="print the files and their size, and stop")
    parser.add_argument("--file", type=Path, action="append", help="keep these files warm instead")
    args = parser.parse_args(argv)
    files = args.file or warm_list()
    if args.list:
        for path in files:
            print(path.stat().st_size, path)
        print(f"{len(files)} files, {sum(p.stat().st_size for p in files) / 1e6:.0f} MB", file=sys.stderr)
        return 0
    try:  # readable when the parent has ended
        parent = os.pidfd_open(args.parent) if args.parent else None
    except ProcessLookupError:
        return 0
    lock = may_lock(sum(p.stat().st_size for p in files), available_memory())
    maps = [m for m in (_map(p, lock) for p in files) if m is not None]
    mapped = [m for m, locked in maps if not locked]
    while True:
        touch(mapped)
        if parent is None:
            time.sleep(args.every)
        elif select.select([parent], [], [], args.every)[0]:
            return 0


if __name__ == "__main__":
    sys.exit(main())
