"""A state file that is not what it should be, for the tests of the state's storage failures.

``damage(path)`` overwrites every page of a SQLite file but those of its schema with random bytes, as a
failing disk or a half-copied file leaves it: the file opens and lists its tables, and any read of a
table fails. ``read_only(path)`` makes a file or a folder read-only for the bot, for real:
for an unprivileged user by its mode bits; for root (whom mode bits do not stop) by a read-only bind
mount of it onto itself, removed on every way out; a test is skipped, with the reason, where neither
can be done.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

def damage(path: Path) -> None:
    """Every page of the SQLite file at ``path`` but its schema's overwritten with random bytes."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("pragma wal_checkpoint(truncate)")
        size = db.execute("pragma page_size").fetchone()[0]
        count = db.execute("pragma page_count").fetchone()[0]
        schema = {r[0] for r in db.execute("select pageno from dbstat where name = 'sqlite_schema'")}
    assert count > len(schema), "a state with pages besides its schema's"
    with open(path, "r+b") as fh:
        for page in range(1, count + 1):
            if page not in schema:
                fh.seek((page - 1) * size)
                fh.write(os.urandom(size))


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` (a file or a folder) cannot be written by this process or its children while inside."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        try:
            yield
        finally:
            path.chmod(mode)
        return
    mount = shutil.which("mount")
    if mount is None:
        pytest.skip("running as root without mount(8): no way to make a file read-only for root")
    done = subprocess.run([mount, "--bind", "-o", "ro", str(path), str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"running as root, and a read-only bind mount is refused here: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run([shutil.which("umount") or "umount", "-l", str(path)], check=True)


@contextlib.contextmanager
def small_disk(folder: Path, size_mb: int) -> Iterator[Path]:
    """A file system of ``size_mb`` MB of its own mounted at ``folder`` (a tmpfs, which fills up for real,
    ENOSPC and all), unmounted on every way out; the test is skipped where it cannot be mounted."""
    folder.mkdir(parents=True, exist_ok=True)
    mount = shutil.which("mount")
    if os.geteuid() != 0 or mount is None:
        pytest.skip("a small file system of its own needs root and mount(8)")
    done = subprocess.run([mount, "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"a tmpfs cannot be mounted here: {done.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run([shutil.which("umount") or "umount", "-l", str(folder)], check=True)


def fill(folder: Path, leave_mb: float = 0.0) -> Path:
    """Write a file into ``folder`` until its disk has at most ``leave_mb`` MB free (0: until it is full,
    ENOSPC); returns the file, whose removal frees the space again."""
    filler = folder / "filler.bin"
    block = b"\0" * 65536
    with open(filler, "wb", buffering=0) as fh:
        try:
            while shutil.disk_usage(folder).free > leave_mb * 1048576 + len(block) or not leave_mb:
                fh.write(block)
                fh.flush()
        except OSError:
            pass
    return filler
