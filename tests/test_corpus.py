from __future__ import annotations

import json
from pathlib import Path

import pytest

from paperfields.extract.corpus import CorpusError, header_looks_like_abstract, paper_id, parse_seed_text, read_corpus_files, write_corpus
from tests.conftest import SEEDS

seeds_present = pytest.mark.skipif(not SEEDS.is_dir(), reason=f"seed files not found at {SEEDS}")


@seeds_present
def test_real_seeds_give_76_abstracts_without_headers():
    papers = read_corpus_files(sorted(SEEDS.glob("*.txt")))
    assert len(papers) == 76
    assert {p.source for p in papers} == {f.name for f in SEEDS.glob("*.txt")}
    assert all(p.text not in ("ICML 2026 Papers", "ICML 2026 论文列表") for p in papers)
    assert all(len(p.text) > 300 for p in papers)
    assert [p.position for p in papers if p.source == papers[0].source] == list(range(1, 20))


@seeds_present
def test_committed_corpus_equals_a_rebuild_and_ids_are_stable(tmp_path, root):
    out = tmp_path / "corpus.jsonl"
    write_corpus(read_corpus_files(sorted(SEEDS.glob("*.txt"))), out)
    assert out.read_bytes() == (root / "gold" / "corpus.jsonl").read_bytes()
    # Reordering the input files keeps every id.
    again = read_corpus_files(sorted(SEEDS.glob("*.txt"), reverse=True))
    assert {p.id for p in again} == {json.loads(l)["id"] for l in out.read_text().splitlines()}


@seeds_present
def test_no_real_seed_file_warns_about_its_header():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        papers = read_corpus_files(sorted(SEEDS.glob("*.txt")))
    assert len(papers) == 76 and len(sorted(SEEDS.glob("*.txt"))) == 4
    for seed in SEEDS.glob("*.txt"):
        assert header_looks_like_abstract(seed.read_text(encoding="utf-8").lstrip("\ufeff").splitlines()[0]) is None


@pytest.mark.parametrize("line, why", [
    ("ICML 2026 Papers", None),
    ("ICML 2026 论文列表", None),
    ("Abstracts, collected 2026-01-05 from arXiv cs.CL.", None),  # one sentence
    ("We propose FooNet. It beats BarNet on GSM8K.", "2 sentences"),
    ("Is scaling enough? We show it is not!", "2 sentences"),
    ("x" * 200, None),
    ("x" * 201, "201 characters, more than a 200-character header"),
])
def test_header_rule(line, why):
    assert header_looks_like_abstract(line) == why


def test_a_file_without_header_warns_naming_file_and_line_1(tmp_path):
    first = "Large language models reason poorly about code. We propose FooNet, which plans before it writes. It beats BarNet by 3 points."
    path = _write(tmp_path, "noheader.txt", f"{first}\n\nSecond abstract.\n".encode())
    with pytest.warns(UserWarning) as caught:
        papers = parse_seed_text(path)
    assert [str(w.message) for w in caught] == [
        f"{path}:1: line 1 looks like an abstract (3 sentences) but is skipped as the file's header line; the format is a header line, "
        "then one abstract per blank-line-separated paragraph: add a header line (e.g. the venue) if this file has none"]
    assert [p.text for p in papers] == ["Second abstract."]  # the format is unchanged: line 1 is still the header
    long_line = _write(tmp_path, "long.txt", ("word " * 60).encode() + b"\ncontinued\n\nNext.\n")
    with pytest.warns(UserWarning, match=rf"{long_line}:1: line 1 looks like an abstract \(299 characters, more than a 200-character header\)"):
        parse_seed_text(long_line)


def test_cli_build_prints_the_header_warning(tmp_path):
    import subprocess
    import sys

    path = _write(tmp_path, "noheader.txt", b"We propose FooNet. It beats BarNet.\n\nSecond abstract.\n")
    proc = subprocess.run([sys.executable, "-m", "paperfields.cli", "corpus", "build", str(path), "--out", str(tmp_path / "c.jsonl")],
                          capture_output=True, text=True)
    assert proc.returncode == 0
    assert f"warning: {path}:1: line 1 looks like an abstract (2 sentences) but is skipped as the file's header line" in proc.stderr
    assert "wrote 1 abstracts from 1 file(s)" in proc.stderr


def test_paper_id_depends_on_text_only():
    assert paper_id("abc") == paper_id("abc") == "pba7816bf8f"
    assert paper_id("abc") != paper_id("abd")


def _write(tmp_path: Path, name: str, content: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


def test_seed_format_paragraphs_and_lines(tmp_path):
    path = _write(tmp_path, "s.txt", b"Header\n\nFirst abstract\ncontinues here.\n\n\nSecond one.\n")
    papers = parse_seed_text(path)
    assert [p.text for p in papers] == ["First abstract continues here.", "Second one."]
    assert [(p.position, p.line) for p in papers] == [(1, 3), (2, 7)]


def test_missing_file_is_named(tmp_path):
    with pytest.raises(CorpusError, match=r"nope\.txt: no such file"):
        read_corpus_files([tmp_path / "nope.txt"])


def test_non_utf8_bytes_name_file_and_line(tmp_path):
    path = _write(tmp_path, "bad.txt", b"Header\n\nok line\n\nbad \xff byte\n")
    with pytest.raises(CorpusError, match=r"bad\.txt:5: bytes are not valid UTF-8"):
        read_corpus_files([path])


def test_file_with_only_a_header_has_no_abstracts(tmp_path):
    path = _write(tmp_path, "empty.txt", b"ICML 2026 Papers\n\n\n")
    with pytest.raises(CorpusError, match=r"empty\.txt:1: no abstracts"):
        read_corpus_files([path])


def test_duplicate_abstract_names_both_places(tmp_path):
    a = _write(tmp_path, "a.txt", b"H\n\nSame text.\n\nOther.\n")
    b = _write(tmp_path, "b.txt", b"H\n\nSame  text.\n")
    with pytest.raises(CorpusError, match=r"b\.txt:3: duplicate abstract \(same text as a\.txt:3\)"):
        read_corpus_files([a, b])


def test_jsonl_corpus_and_its_errors(tmp_path):
    good = _write(tmp_path, "c.jsonl", b'{"id": "x1", "text": "An abstract."}\n\n{"id": "x2", "text": "Another."}\n')
    assert [p.id for p in read_corpus_files([good])] == ["x1", "x2"]
    bad_json = _write(tmp_path, "d.jsonl", b'{"id": "x1", "text": "ok"}\n{"id": \n')
    with pytest.raises(CorpusError, match=r"d\.jsonl:2: not valid JSON"):
        read_corpus_files([bad_json])
    no_text = _write(tmp_path, "e.jsonl", b'{"id": "x1"}\n')
    with pytest.raises(CorpusError, match=r"e\.jsonl:1: field 'text' must be a non-empty string"):
        read_corpus_files([no_text])
    dup = _write(tmp_path, "f.jsonl", b'{"id": "x1", "text": "one"}\n{"id": "x1", "text": "two"}\n')
    with pytest.raises(CorpusError, match=r"duplicate id 'x1'"):
        read_corpus_files([dup])


def test_build_without_out_never_replaces_the_benchmark_corpus_by_accident(tmp_path, root):
    import os
    import shutil
    import subprocess
    import sys

    (tmp_path / "gold").mkdir()
    shutil.copy(root / "gold" / "corpus.jsonl", tmp_path / "gold" / "corpus.jsonl")
    before = (tmp_path / "gold" / "corpus.jsonl").read_bytes()
    mine = tmp_path / "mine.txt"
    mine.write_text("Header\n\nWe propose FooNet, a method for bar.\n")
    env = dict(os.environ, PAPERFIELDS_ROOT=str(tmp_path))
    build = lambda *args: subprocess.run([sys.executable, "-m", "paperfields.cli", "corpus", "build", *args], capture_output=True, text=True, env=env)
    refused = build(str(mine))
    assert refused.returncode == 2 and "--out PATH" in refused.stderr and "--force" in refused.stderr
    assert (tmp_path / "gold" / "corpus.jsonl").read_bytes() == before
    forced = build(str(mine), "--force")
    assert forced.returncode == 0 and (tmp_path / "gold" / "corpus.jsonl").read_text().count("\n") == 1
    rebuilt = build(str(mine))  # a rebuild giving the same bytes needs no --force
    assert rebuilt.returncode == 0 and "wrote 1 abstracts" in rebuilt.stderr


def test_cli_build_into_a_folder_or_an_unwritable_place_is_a_clean_error(tmp_path):
    import subprocess
    import sys

    path = _write(tmp_path, "seeds.txt", b"Header\n\nWe propose FooNet.\n")
    build = lambda out: subprocess.run([sys.executable, "-m", "paperfields.cli", "corpus", "build", str(path), "--out", str(out)],
                                       capture_output=True, text=True)
    folder = build(tmp_path)
    assert folder.returncode == 2 and f"--out {tmp_path} is a folder" in folder.stderr and "Traceback" not in folder.stderr
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")
    unwritable = build(blocked / "c.jsonl")
    assert unwritable.returncode == 2 and f"cannot write {blocked / 'c.jsonl'}" in unwritable.stderr and "Traceback" not in unwritable.stderr
