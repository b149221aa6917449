"""tests/keep_warm.py, which scripts/test.sh runs beside pytest: what it keeps in memory, and that it holds the
files until the run ends, then goes."""
import os
import subprocess
import sys
import time
from pathlib import Path

import keep_warm

from winellbot import bundled

HERE = Path(__file__).resolve().parent


def test_the_files_kept_warm_are_the_dependencies_compiled_code_and_the_models():
    files = keep_warm.warm_list()
    assert len(files) == len(set(files)) and all(p.is_file() for p in files)
    names = {p.name for p in files}
    assert "libtorch_cpu.so" in names  # torch's RECORD: winellbot requires torch
    assert any(p.suffix == ".pyc" and "spacy" in p.parts for p in files)  # a dependency's dependency's modules
    minilm = {p for p in files if p.is_relative_to(bundled.minilm_dir())}
    assert any(p.name == "model.safetensors" for p in minilm)
    code = keep_warm.code_files(keep_warm.installed_closure())
    assert code and not [p for p in code if p.suffix == ".py"]  # sources are not read when their bytecode is current


def test_the_closure_follows_only_the_extras_asked_for():
    without = {d.metadata["Name"].lower() for d in keep_warm.installed_closure("winellbot", ())}
    with_dev = {d.metadata["Name"].lower() for d in keep_warm.installed_closure("winellbot", ("dev",))}
    assert "torch" in without and "pytest" not in without  # pytest comes with the dev extra only
    assert "pytest" in with_dev and without < with_dev


def _mapped(pid: int, path: Path) -> bool:
    return str(path) in Path(f"/proc/{pid}/maps").read_text()


def test_it_holds_its_files_in_memory_until_its_parent_has_ended(tmp_path):
    held = tmp_path / "model.bin"
    held.write_bytes(os.urandom(1 << 20))
    parent = subprocess.Popen(["sleep", "60"])
    warm = subprocess.Popen([sys.executable, str(HERE / "keep_warm.py"), "--parent", str(parent.pid),
                             "--file", str(held), "--every", "0.2"])
    try:
        deadline = time.monotonic() + 30
        while not _mapped(warm.pid, held.resolve()) and time.monotonic() < deadline:
            assert warm.poll() is None, "keep_warm ended while its parent lived"
            time.sleep(0.1)
        assert _mapped(warm.pid, held.resolve())
        status = Path(f"/proc/{warm.pid}/status").read_text()
        locked_kb = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmLck:")))
        if os.geteuid() == 0:  # may lock: the whole file, at once
            assert locked_kb >= 1024, status
        time.sleep(0.5)
        assert warm.poll() is None
    finally:
        parent.kill()
        parent.wait()
    assert warm.wait(timeout=10) == 0  # it watches its parent (a pidfd)


def test_it_locks_at_most_a_quarter_of_the_memory_available(tmp_path):
    assert keep_warm.may_lock(3 << 30, 22 << 30) and not keep_warm.may_lock(3 << 30, 11 << 30)
    assert keep_warm.available_memory() > 0
    held = tmp_path / "model.bin"
    held.write_bytes(b"x" * 8192)
    mapped, locked = keep_warm._map(held, lock=False)
    assert not locked and mapped[:1] == b"x" and keep_warm.touch([mapped]) == 2


def test_a_file_gone_or_empty_is_left_out(tmp_path):
    (tmp_path / "empty").write_bytes(b"")
    maps = [keep_warm._map(tmp_path / "empty"), keep_warm._map(tmp_path / "missing")]
    assert maps == [None, None]
