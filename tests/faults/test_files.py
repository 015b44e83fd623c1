"""core/files.py: the one atomic writer (issue 17 item 3)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap

import pytest

from core import files
from core.errors import InputError
from core.files import atomic_outputs, clean_stale, write_text, write_texts
from tests.faults.conftest import temporaries, tmpfs


def _one_line(err: InputError) -> str:
    text = str(err)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("umask", [0o022, 0o007, 0o077])
def test_final_files_get_the_users_umask_not_0600(tmp_path, umask):
    old = os.umask(umask)
    try:
        write_texts((tmp_path / "a.csv", "x\n1\n"), (tmp_path / "a.csv.json", "{}"))
    finally:
        os.umask(old)
    for name in ("a.csv", "a.csv.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o666 & ~umask


def test_a_pair_appears_together_secondary_renamed_first(tmp_path, monkeypatch):
    order = []
    real_replace = os.replace

    def recording_replace(src, dst):
        order.append(os.path.basename(dst))
        real_replace(src, dst)

    monkeypatch.setattr(files.os, "replace", recording_replace)
    write_texts((tmp_path / "t.csv", "a\n1\n"), (tmp_path / "t.csv.json", '{"n": 1}'))
    assert order == ["t.csv.json", "t.csv"]
    assert (tmp_path / "t.csv").read_text() == "a\n1\n"
    assert (tmp_path / "t.csv.json").read_text() == '{"n": 1}'
    assert temporaries(tmp_path) == []


def test_a_failure_while_writing_the_secondary_leaves_nothing(tmp_path):
    with (
        pytest.raises(InputError) as info,
        atomic_outputs(tmp_path / "t.csv", tmp_path / "t.csv.json") as (table, sidecar),
    ):
        table.write_text("a\n1\n")
        with sidecar.open() as fh:
            fh.write("{")
            raise OSError(28, "No space left on device")
    assert "No space left on device" in _one_line(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_failed_primary_rename_removes_the_already_renamed_secondary(tmp_path, monkeypatch):
    real_replace = os.replace

    def failing_replace(src, dst):
        if str(dst).endswith("t.csv"):
            raise OSError(5, "Input/output error", str(dst))
        real_replace(src, dst)

    monkeypatch.setattr(files.os, "replace", failing_replace)
    with pytest.raises(InputError):
        write_texts((tmp_path / "t.csv", "a\n"), (tmp_path / "t.csv.json", "{}"))
    assert list(tmp_path.iterdir()) == []


def test_any_other_exception_removes_the_temporaries_and_propagates(tmp_path):
    with pytest.raises(KeyError), atomic_outputs(tmp_path / "t.csv") as (out,):
        out.write_text("partial")
        raise KeyError("boom")
    assert list(tmp_path.iterdir()) == []


def test_streaming_writes_go_to_a_temporary_until_the_end(tmp_path):
    target = tmp_path / "big.csv"
    target.write_text("old\n")
    with atomic_outputs(target) as (out,):
        assert out.temp.parent == tmp_path and out.temp.name.startswith(".big.csv.dpx-")
        with out.open(newline="") as fh:
            for chunk in range(50):
                fh.write("".join(f"{chunk},{i}\n" for i in range(1000)))
                assert target.read_text() == "old\n"  # the old file is intact meanwhile
    lines = target.read_text().splitlines()
    assert len(lines) == 50_000 and lines[-1] == "49,999"
    assert temporaries(tmp_path) == []


def test_a_device_target_is_refused_and_left_a_device(dev_full):
    with pytest.raises(InputError) as info:
        write_text(dev_full, "x")
    assert "not a regular file" in _one_line(info.value)
    assert stat.S_ISCHR(os.stat(dev_full).st_mode)


def test_a_fifo_target_is_refused(fifo):
    with pytest.raises(InputError):
        write_text(fifo, "x")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_directory_target_is_refused_and_untouched(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "keep").write_text("k")
    with pytest.raises(InputError) as info:
        write_text(tmp_path / "d", "x")
    assert "is a directory" in _one_line(info.value)
    assert (tmp_path / "d" / "keep").read_text() == "k"
    assert temporaries(tmp_path) == []


@pytest.mark.parametrize(
    "relative",
    ["missing-dir/x.csv", "a-file.txt/x.csv", "x" * 300 + ".csv", "/".join(["d"] * 2100) + ".csv"],
    ids=["missing parent", "path through a file", "name too long", "path too long"],
)
def test_unwritable_paths_are_one_line_refusals(tmp_path, relative):
    (tmp_path / "a-file.txt").write_text("f")
    with pytest.raises(InputError) as info:
        write_text(tmp_path / relative, "x")
    _one_line(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file.txt"]


def test_a_long_but_valid_name_still_gets_a_temporary_beside_it(tmp_path):
    target = tmp_path / ("n" * 250 + ".csv")  # 254 bytes: the temporary's name is shortened
    write_text(target, "ok")
    assert target.read_text() == "ok" and temporaries(tmp_path) == []


def test_make_parents_creates_missing_directories(tmp_path):
    with atomic_outputs(tmp_path / "a" / "b" / "t.csv", make_parents=True) as (out,):
        out.write_text("x")
    assert (tmp_path / "a" / "b" / "t.csv").read_text() == "x"


def test_a_symlink_target_writes_through_the_link(tmp_path):
    real = tmp_path / "real.csv"
    real.write_text("old")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_a_full_file_system_fails_cleanly(tmp_path):
    with tmpfs(tmp_path / "tiny", "64k") as tiny:
        with pytest.raises(InputError) as info:
            write_texts((tiny / "t.csv", "x" * 1_000_000), (tiny / "t.csv.json", "{}"))
        assert "No space left on device" in _one_line(info.value)
        assert list(tiny.iterdir()) == []


def test_a_read_only_directory_fails_cleanly(tmp_path):
    with tmpfs(tmp_path / "ro", "64k", read_only=True) as ro:
        with pytest.raises(InputError) as info:
            write_text(ro / "t.csv", "x")
        assert "Read-only file system" in _one_line(info.value)
        assert list(ro.iterdir()) == []


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_clean_stale_removes_only_temporaries_of_dead_writers(tmp_path):
    target = tmp_path / "t.csv"
    dead = tmp_path / f".t.csv.dpx-{_dead_pid()}-0123456789abcdef.part"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        alive = tmp_path / f".t.csv.dpx-{sleeper.pid}-0123456789abcdef.part"
        other = tmp_path / f".u.csv.dpx-{_dead_pid()}-0123456789abcdef.part"
        for p in (dead, alive, other):
            p.write_text("partial")
        assert clean_stale(target) == [dead]
        assert alive.exists() and other.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


WRITER = textwrap.dedent(
    """
    import sys, time
    from core.files import atomic_outputs
    with atomic_outputs(sys.argv[1], sys.argv[1] + ".json") as (table, meta):
        with table.open() as fh:
            fh.write("header\\n")
            fh.flush()
            print("writing", flush=True)
            time.sleep(600)
        meta.write_text("{}")
    """
)


def test_a_kill_during_a_write_leaves_only_temporaries_which_the_next_write_removes(tmp_path):
    target = tmp_path / "t.csv"
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout.readline().strip() == "writing"
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert not target.exists() and not (tmp_path / "t.csv.json").exists()
    assert len(temporaries(tmp_path)) == 2  # the documented leftovers of a kill
    write_texts((target, "a\n"), (tmp_path / "t.csv.json", "{}"))
    assert temporaries(tmp_path) == []
    assert target.read_text() == "a\n"


def test_work_directory_is_private_and_removes_a_killed_run_s(tmp_path):
    """Intermediate data (spill files, staged rows) lives in a 0700 directory named by the
    process; one left by a process that no longer runs is removed by the next one."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    orphan = tmp_path / f"dpx-pp-{done.stdout.strip()}-x"
    orphan.mkdir()
    (orphan / "rows.tmp").write_bytes(b"private")
    other_tool = tmp_path / f"dpx-spill-{done.stdout.strip()}-x"
    other_tool.mkdir()
    with files.work_directory("dpx-pp-", tmp_path) as work:
        assert stat.S_IMODE(os.stat(work).st_mode) == 0o700
        assert os.path.basename(work).startswith(f"dpx-pp-{os.getpid()}-")
        assert not orphan.exists() and other_tool.exists()  # only its own prefix
    assert not os.path.exists(work)
