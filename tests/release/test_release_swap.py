"""Issue 43: a re-run of `dtmr anonymize` that replaces an existing release swaps the release and its key as one
unit. The run is killed (os._exit, no cleanup) before each file-system step of its end, one run per step:
rename, replace, unlink and rmdir, from the staged release to the last file of its parts folder. After every
kill the disk holds a consistent pair (old or new; with a journal, any reader finishes the new one) and the
rerun finishes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dtmr.cli import main
from dtmr.io.library import ClipLibrary
from dtmr.release import anonymize
from dtmr.release.key import key_path_for, read_key
from dtmr.release.release import open_release, release_attributes
from dtmr.release.swap import JOURNAL, finish_swap, parts_folder
from dtmr.resources import resource_path

DEMO = resource_path("demo/demo_library.h5")

#: the replacing run, killed before its `kill_at`-th file-system step after the merge starts (0: not killed);
#: prints how many steps it took when it finishes
KILLED_REPLACEMENT = """
import os, sys
from dtmr.cli import main
from dtmr.release import anonymize

anonymize.CHUNK = 6
kill_at, steps, armed = int(sys.argv[3]), [0], [False]

def step(call):
    def counted(*args, **kwargs):
        if armed[0]:
            steps[0] += 1
            if steps[0] == kill_at:
                os._exit(137)  # a kill: no finally, no atexit, no flush
        return call(*args, **kwargs)
    return counted

for name in ("replace", "rename", "unlink", "rmdir"):
    setattr(os, name, step(getattr(os, name)))
merge = anonymize.write_release

def write_release(*args, **kwargs):
    armed[0] = True
    return merge(*args, **kwargs)

anonymize.write_release = write_release
status = main(["anonymize", sys.argv[1], "--method", "naive", "--overwrite", "-o", sys.argv[2]])
print(status, steps[0])
sys.exit(status)
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """12 demo clips (2 parts of 6 in the killed run)."""
    path = tmp_path_factory.mktemp("data") / "input.h5"
    with ClipLibrary(DEMO) as demo:
        ClipLibrary.create(path, demo.read_many(range(0, len(demo), 30)), action_names=demo.action_names).close()
    return path


@pytest.fixture(scope="module")
def old_pair(source, tmp_path_factory) -> tuple[Path, str]:
    """A finished release (method raw) and its key, copied into each test folder."""
    out = tmp_path_factory.mktemp("old") / "released.h5"
    assert main(["anonymize", str(source), "--method", "raw", "-o", str(out)]) == 0
    return out, read_key(key_path_for(out)).release_token


def _replace(source: Path, out: Path, kill_at: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", KILLED_REPLACEMENT, str(source), str(out), str(kill_at)],
                          capture_output=True, text=True, timeout=300, check=False)


def _copy_old(old_pair, folder: Path) -> Path:
    folder.mkdir()
    old, _ = old_pair
    out = folder / old.name
    shutil.copy2(old, out)
    shutil.copy2(key_path_for(old), key_path_for(out))
    return out


def _on_disk_token(out: Path) -> str:
    """The token of the pair on disk as it lies, without finishing anything: key and release must agree."""
    key_token = read_key(key_path_for(out)).release_token
    assert release_attributes(out)["release_token"] == key_token
    return key_token


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_replacement_killed_at_every_step_leaves_one_pair_and_its_rerun_finishes(source, old_pair, tmp_path,
                                                                                  monkeypatch):
    monkeypatch.setattr(anonymize, "CHUNK", 6)
    _, old_token = old_pair
    straight = _copy_old(old_pair, tmp_path / "straight")
    done = _replace(source, straight, 0)
    assert done.returncode == 0, done.stderr
    steps = int(done.stdout.split()[-1])
    assert steps >= 8  # staged release, staged key, journal, key, release, journal gone, parts folder
    assert _on_disk_token(straight) != old_token and not parts_folder(straight).exists()

    seen = []
    for kill_at in range(1, steps + 1):
        out = _copy_old(old_pair, tmp_path / f"k{kill_at:02d}")
        killed = _replace(source, out, kill_at)
        assert killed.returncode == 137, (kill_at, killed.stderr)
        parts = parts_folder(out)
        new_token = json.loads((parts / "run.json").read_text())["release_token"] \
            if (parts / "run.json").is_file() else None
        journal = (parts / JOURNAL).is_file()
        if not journal:  # no swap under way: the pair on disk is consistent as it lies
            _on_disk_token(out)
        library, key = open_release(out)  # a reader finishes a committed swap first, then checks the pair
        library.close()
        assert not (parts / JOURNAL).exists()
        token = key.release_token
        assert token in (old_token, new_token) or (new_token is None and token != old_token), kill_at
        seen.append("old" if token == old_token else "new")
        if journal:
            assert token == new_token

        assert main(["anonymize", str(source), "--method", "naive", "--overwrite", "-o", str(out)]) == 0
        library, key = open_release(out)
        library.close()
        if new_token is not None:
            assert key.release_token == new_token  # the rerun resumed the killed run: same order and token
        assert sorted(os.listdir(out.parent)) == ["released.h5", "released.key.json"], kill_at

    # the old pair until the commit, the new one after: never back
    assert seen == sorted(seen, key=lambda s: s == "new") and "old" in seen and "new" in seen, seen


def test_a_committed_swap_is_finished_by_a_reader_and_an_uncommitted_one_is_not(source, old_pair, tmp_path,
                                                                               monkeypatch):
    """The two halves of the swap without subprocesses: a journal rolls forward, staged files alone do not."""
    monkeypatch.setattr(anonymize, "CHUNK", 6)
    _, old_token = old_pair
    out = _copy_old(old_pair, tmp_path / "one")
    real_replace = os.replace
    calls = []

    def stop_after_the_key(src, dst):
        real_replace(src, dst)
        calls.append(Path(dst).name)
        if Path(dst) == key_path_for(out):
            raise KeyboardInterrupt  # between the two renames of the swap

    monkeypatch.setattr(os, "replace", stop_after_the_key)
    assert main(["anonymize", str(source), "--method", "naive", "--overwrite", "-o", str(out)]) == 130
    monkeypatch.setattr(os, "replace", real_replace)
    assert calls[-4:] == ["release.h5", "release.key.json", JOURNAL, "released.key.json"]
    new_token = read_key(key_path_for(out)).release_token
    assert release_attributes(out)["release_token"] == old_token != new_token  # the window of the issue
    assert finish_swap(out) is True and _on_disk_token(out) == new_token
    assert finish_swap(out) is False  # nothing left to finish

    staged_only = _copy_old(old_pair, tmp_path / "two")
    parts = parts_folder(staged_only)
    parts.mkdir()
    (parts / "release.key.json").write_bytes(key_path_for(out).read_bytes())  # no journal: not committed
    assert finish_swap(staged_only) is False and _on_disk_token(staged_only) == old_token
