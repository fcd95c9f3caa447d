from __future__ import annotations

import json
from pathlib import Path

import pytest

from paperfields.core.corpus import (
    CorpusError,
    header_looks_like_abstract,
    load_corpus,
    paper_id,
    parse_seed_text,
    read_corpus_files,
    read_source,
    split_lines,
    write_corpus,
)
from tests.cli_in_process import run_cli
from tests.conftest import SEEDS


def test_real_seeds_give_76_abstracts_without_headers():
    papers = read_corpus_files(sorted(SEEDS.glob("*.txt")))
    assert len(papers) == 76
    assert {p.source for p in papers} == {f.name for f in SEEDS.glob("*.txt")}
    assert all(p.text not in ("ICML 2026 Papers", "ICML 2026 论文列表") for p in papers)
    assert all(len(p.text) > 300 for p in papers)
    assert [p.position for p in papers if p.source == papers[0].source] == list(range(1, 20))


def test_committed_corpus_equals_a_rebuild_and_ids_are_stable(tmp_path, root):
    out = tmp_path / "corpus.jsonl"
    write_corpus(read_corpus_files(sorted(SEEDS.glob("*.txt"))), out)
    assert out.read_bytes() == (root / "gold" / "corpus.jsonl").read_bytes()
    # Reordering the input files keeps every id.
    again = read_corpus_files(sorted(SEEDS.glob("*.txt"), reverse=True))
    assert {p.id for p in again} == {json.loads(l)["id"] for l in out.read_text().splitlines()}


def test_no_real_seed_file_warns_and_each_header_line_is_skipped():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        papers = read_corpus_files(sorted(SEEDS.glob("*.txt")))
        sources = [read_source(seed) for seed in sorted(SEEDS.glob("*.txt"))]
    assert len(papers) == 76 and len(sources) == 4
    assert [(s.format, s.header, s.header_line, len(s.papers)) for s in sources] == [
        ("text", "ICML 2026 Papers", 1, 19),
        ("text", "ICML 2026 论文列表", 1, 19),
        ("text", "ICML 2026 论文列表", 1, 19),
        ("text", "ICML 2026 论文列表", 1, 19),
    ]


LONG = (
    "We study a problem of some importance. We propose a method that solves it well. "
    "It beats the strongest baseline by 3 points on four benchmarks. Code is released. " * 2
).strip()  # 323 characters, 8 sentences


@pytest.mark.parametrize(
    "paragraph, why",
    [
        (["ICML 2026 Papers"], None),
        (["ICML 2026 论文列表"], None),
        (["  Abstracts (collected 2026-01-05, arXiv cs.CL)  "], None),
        (["Abstracts, collected 2026-01-05 from arXiv cs.CL."], "it ends with '.'"),
        (["We propose FooNet."], "it ends with '.'"),
        (["Is scaling enough? We show it is not!"], "it ends with '!'"),
        (['He said "stop."'], "it ends with '.'"),
        (["模型很好。"], "it ends with '。'"),
        (["x" * 120], None),
        (["x" * 121], "121 characters, more than 120"),
        ([" ".join(["word"] * 15)], None),
        ([" ".join(["word"] * 16)], "16 words, more than 15"),
        (
            ["Large language models reason poorly about code and we", "propose FooNet, which plans first."],
            "line 2 continues its paragraph",
        ),
        (["ICML 2026 Papers", LONG], None),  # a header, then an unwrapped abstract without a blank line
    ],
)
def test_header_rule(paragraph, why):
    assert header_looks_like_abstract(paragraph) == why


def test_hard_wrapped_text_without_header_keeps_its_first_abstract_whole(tmp_path):
    import warnings

    path = _write(
        tmp_path,
        "wrapped.txt",
        b"Large language models reason poorly about code and we\n"
        b"propose FooNet, which plans before it writes.\n\n"
        b"Second abstract, wrapped\nover two lines.\n",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        source = read_source(path)
    assert (source.header, source.header_line) == (None, None)
    assert [(p.text, p.position, p.line) for p in source.papers] == [
        ("Large language models reason poorly about code and we propose FooNet, which plans before it writes.", 1, 1),
        ("Second abstract, wrapped over two lines.", 2, 4),
    ]


def test_short_first_abstract_without_header_is_kept_with_a_warning_naming_file_and_line(tmp_path):
    path = _write(tmp_path, "noheader.txt", b"We propose FooNet.\n\nSecond abstract.\n")
    with pytest.warns(UserWarning) as caught:
        papers = parse_seed_text(path)
    assert [str(w.message) for w in caught] == [
        f"{path}:1: line 1 is read as the first abstract, not as a header line "
        "(it ends with '.'); pass --header if it is a header"
    ]
    assert [(p.text, p.line) for p in papers] == [("We propose FooNet.", 1), ("Second abstract.", 3)]
    assert [p.text for p in parse_seed_text(path, header=True)] == ["Second abstract."]


def test_header_flags_force_the_choice(tmp_path):
    import warnings

    path = _write(tmp_path, "h.txt", b"\nICML 2026 Papers\n\nFirst abstract.\n")
    assert [(p.text, p.line) for p in parse_seed_text(path)] == [("First abstract.", 4)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a forced choice needs no warning
        assert [(p.text, p.line) for p in parse_seed_text(path, header=False)] == [
            ("ICML 2026 Papers", 2),
            ("First abstract.", 4),
        ]
    glued = _write(tmp_path, "glued.txt", b"ICML 2026 Papers\nFirst abstract, wrapped\nover lines.\n")
    assert [(p.text, p.line) for p in parse_seed_text(glued)] == [
        ("ICML 2026 Papers First abstract, wrapped over lines.", 1)
    ]
    assert [(p.text, p.line) for p in parse_seed_text(glued, header=True)] == [
        ("First abstract, wrapped over lines.", 2)
    ]
    unwrapped = _write(tmp_path, "unwrapped.txt", f"ICML 2026 Papers\n{LONG}\n".encode())
    assert [(p.text, p.line) for p in parse_seed_text(unwrapped)] == [(LONG, 2)]


def test_a_file_with_only_a_header_says_which_line_was_taken_and_how_to_keep_it(tmp_path):
    path = _write(tmp_path, "only.txt", b"A short abstract without a final period\n")
    with pytest.raises(CorpusError) as err:
        parse_seed_text(path)
    assert str(err.value) == (
        f"{path}:1: no abstracts found (line 1 'A short abstract without a final period' is the header line: "
        "a single short line that does not end a sentence; pass --no-header if it is an abstract)"
    )
    assert [p.text for p in parse_seed_text(path, header=False)] == ["A short abstract without a final period"]
    with pytest.raises(CorpusError) as err:
        parse_seed_text(_write(tmp_path, "empty.txt", b"\n \n"))
    assert str(err.value) == f"{tmp_path / 'empty.txt'}:1: no abstracts found (the file is empty)"


def _abstracts(n: int) -> list[str]:
    return [f"Abstract number {i} studies a problem. " + LONG for i in range(1, n + 1)]


def test_one_abstract_per_line_without_blank_lines_is_refused_with_advice(tmp_path):
    lines = _abstracts(4)
    path = _write(tmp_path, "perline.txt", ("ICML 2026 Papers\n" + "\n".join(lines) + "\n").encode())
    with pytest.raises(CorpusError) as err:
        parse_seed_text(path)
    assert str(err.value) == (
        f"{path}:2: one paragraph of 4 lines, 4 of them each a whole abstract (300+ characters, 3+ sentences): "
        "this looks like one abstract per line; pass --one-per-line to read each line as an abstract, "
        "or put a blank line between abstracts"
    )
    source = read_source(path, one_per_line=True)
    assert source.header == "ICML 2026 Papers"
    assert [(p.text, p.position, p.line) for p in source.papers] == [
        (text, i, i + 1) for i, text in enumerate(lines, start=1)
    ]
    no_header = _write(tmp_path, "noheader.txt", ("\n".join(lines) + "\n").encode())
    with pytest.raises(CorpusError, match=rf"^{no_header}:1: one paragraph of 4 lines, 4 of them"):
        parse_seed_text(no_header)
    assert [p.line for p in parse_seed_text(no_header, one_per_line=True)] == [1, 2, 3, 4]


def test_glued_abstracts_warn_naming_file_and_line(tmp_path):
    two = _abstracts(2)
    path = _write(tmp_path, "two.txt", ("Header\n\nA first abstract.\n\n" + "\n".join(two) + "\n").encode())
    with pytest.warns(UserWarning) as caught:
        papers = parse_seed_text(path)
    body = " ".join(two)
    assert [str(w.message) for w in caught] == [
        f"{path}:5: abstract 2 is 721 characters, 18 sentences on 2 lines: it may be several abstracts run together; "
        "put a blank line between abstracts, or pass --one-per-line if each line is one abstract"
    ]
    assert [p.text for p in papers] == ["A first abstract.", body]
    huge = " ".join(_abstracts(10))
    one_line = _write(tmp_path, "huge.txt", f"Header\n\n{huge}\n".encode())
    with pytest.warns(UserWarning) as caught:
        parse_seed_text(one_line)
    assert [str(w.message) for w in caught] == [
        f"{one_line}:3: abstract 1 is 3,610 characters, 90 sentences on 1 line: it may be several "
        "abstracts run together; put a blank line between abstracts"
    ]


def test_a_long_abstract_warns_alike_from_jsonl_and_text_naming_file_and_line(tmp_path):
    import warnings

    from paperfields.core.corpus import LONG_ABSTRACT_CHARS

    sentence = "We propose a method that improves accuracy on a benchmark by a wide margin. "  # 76 characters
    long = (sentence * 40)[:LONG_ABSTRACT_CHARS] + "x"  # one character over the threshold, 39 sentences
    at_limit = long[:LONG_ABSTRACT_CHARS]
    assert len(long) == LONG_ABSTRACT_CHARS + 1 and len(at_limit) == LONG_ABSTRACT_CHARS
    jsonl = _write(
        tmp_path,
        "long.jsonl",
        "\n".join(["", json.dumps({"id": "a", "text": at_limit}), "", json.dumps({"id": "b", "text": long})]).encode()
        + b"\n",
    )
    text = _write(tmp_path, "long.txt", f"Header\n\n{at_limit}\n\n{long}\n".encode())
    expected = "abstract 2 is 3,001 characters, 39 sentences{on}: it may be several abstracts run together; {advice}"
    with pytest.warns(UserWarning) as caught:
        read_source(jsonl)
    assert [str(w.message) for w in caught] == [
        f"{jsonl}:4: " + expected.format(on="", advice="give each abstract its own JSON line")
    ]
    with pytest.warns(UserWarning) as caught:
        read_source(text)
    assert [str(w.message) for w in caught] == [
        f"{text}:5: " + expected.format(on=" on 1 line", advice="put a blank line between abstracts")
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # loading a corpus to run it says nothing: corpus build said it
        assert [len(p.text) for p in load_corpus(jsonl)] == [LONG_ABSTRACT_CHARS, LONG_ABSTRACT_CHARS + 1]
    built = run_cli("corpus", "build", str(jsonl), "--out", str(tmp_path / "c.jsonl"))
    assert built.returncode == 0 and built.stderr.splitlines()[0] == "warning: " + f"{jsonl}:4: " + expected.format(
        on="", advice="give each abstract its own JSON line"
    )


def test_only_newline_cr_and_crlf_break_lines(tmp_path):
    # U+2028/U+2029, NEL, form feed, vertical tab and the separators
    # are characters of the text: str.splitlines() would break at each.
    odd = "A\u2028Net uses\x85NEL, a\x0cfeed, a\x0btab and\u2029a\x1cseparator."
    path = _write(tmp_path, "odd.txt", f"Header\r\n\r\n{odd}\r\n\r\nSecond\rabstract.\n\nThird.".encode())
    papers = parse_seed_text(path)
    assert [(p.text, p.line) for p in papers] == [(odd, 3), ("Second abstract.", 5), ("Third.", 8)]
    assert split_lines("a\u2028b\x85c\x0cd\r\ne\rf\ng") == ["a\u2028b\x85c\x0cd", "e", "f", "g"]
    # A corpus JSONL keeps those characters raw (ensure_ascii=False) and reads back the same records.
    out = tmp_path / "c.jsonl"
    write_corpus(papers, out)
    assert "\u2028" in out.read_text(encoding="utf-8") and load_corpus(out) == papers
    bad = _write(tmp_path, "bad.jsonl", '{"id": "a", "text": "A\u2028Net"}\n{"id": \n'.encode())
    with pytest.raises(CorpusError, match=rf"^{bad}:2: not valid JSON"):
        load_corpus(bad)


@pytest.mark.parametrize("name", ["c.json", "c.ndjson", "c.JSONL", "c"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_jsonl_is_read_by_its_name_else_by_content_and_a_bom_is_accepted(tmp_path, name, bom):
    import warnings

    path = _write(
        tmp_path, name, bom + b'\n  {"id": "x1", "text": "An abstract."}\r\n{"id": "x2", "text": "Another."}\n'
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        source = read_source(path)
    assert source.format == "jsonl"
    assert [(p.id, p.text, p.source, p.position, p.line) for p in source.papers] == [
        ("x1", "An abstract.", name, 1, 2),
        ("x2", "Another.", name, 2, 3),
    ]
    assert load_corpus(path) == source.papers


def test_json_that_is_not_jsonl_is_an_error_not_text(tmp_path):
    broken = _write(tmp_path, "c.json", b'{"id": "x1", "text": "An abstract.",}\n{"id": "x2", "text": "B."}\n')
    with pytest.raises(CorpusError) as err:
        read_source(broken)
    assert str(err.value) == (
        f"{broken}:1: not valid JSON (Expecting property name enclosed in double quotes); read as JSONL because the "
        "file is named *.json; a JSONL corpus holds one JSON object per line"
    )
    pretty = _write(tmp_path, "p.json", b'{\n  "id": "x1",\n  "text": "An abstract."\n}\n')
    with pytest.raises(
        CorpusError,
        match=rf"^{pretty}:1: not valid JSON \(.*\); read as JSONL because the file is named \*\.json; "
        "a JSONL corpus holds one JSON object per line$",
    ):
        read_source(pretty)
    array = _write(tmp_path, "a.json", b'[{"id": "x1", "text": "An abstract."}]\n')
    with pytest.raises(CorpusError) as err:
        read_source(array)
    assert (
        str(err.value)
        == f"{array}:1: a JSON array; a corpus file is JSONL, one JSON object with 'id' and 'text' per line"
    )
    bracket = _write(tmp_path, "b.txt", b"[draft] ICML papers\n\nAn abstract.\n")
    assert [p.text for p in read_source(bracket).papers] == ["An abstract."]


def test_a_directory_says_so_and_suggests_a_glob(tmp_path):
    with pytest.raises(CorpusError) as err:
        read_corpus_files([tmp_path])
    assert str(err.value) == f"{tmp_path}: is a directory, not a file; pass the files in it, e.g. {tmp_path / '*.txt'}"
    with pytest.raises(CorpusError) as err:
        load_corpus(tmp_path)
    assert str(err.value) == f"{tmp_path}: is a directory, not a file; pass the files in it, e.g. {tmp_path / '*.txt'}"


def test_load_corpus_of_a_text_file_points_to_corpus_build(tmp_path):
    path = _write(tmp_path, "mine.txt", b"\xef\xbb\xbf\nICML 2026 Papers\n\nWe propose FooNet.\n")
    with pytest.raises(CorpusError) as err:
        load_corpus(path)
    assert str(err.value) == (
        f"{path}:2: not a corpus JSONL (line 2 is not a JSON object with 'id' and 'text'); "
        f"to make one from a text file of abstracts: paperfields corpus build {path} --out corpus.jsonl"
    )


def _cli(*args: str, env: dict | None = None):
    return run_cli(*args, env=env)


def test_cli_run_on_a_text_corpus_points_to_corpus_build(tmp_path):
    path = _write(tmp_path, "mine.txt", b"ICML 2026 Papers\n\nWe propose FooNet.\n")
    proc = _cli(
        "run",
        "-b",
        "rules/baseline",
        "--corpus",
        str(path),
        "--split",
        "all",
        "--no-score",
        "--runs-dir",
        str(tmp_path / "runs"),
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-1] + "\n" == (
        f"error: {path}:1: not a corpus JSONL (line 1 is not a JSON object with 'id' and 'text'); "
        f"to make one from a text file of abstracts: paperfields corpus build {path} --out corpus.jsonl\n"
    )
    assert not (tmp_path / "runs").exists()


def test_cli_build_says_how_each_file_was_read_and_takes_the_flags(tmp_path):
    text = _write(tmp_path, "a.txt", b"ICML 2026 Papers\n\nWe propose FooNet.\n")
    jsonl = _write(tmp_path, "b.json", b'{"id": "x1", "text": "An abstract."}\n')
    out = tmp_path / "c.jsonl"
    proc = _cli("corpus", "build", str(text), str(jsonl), "--out", str(out))
    assert proc.returncode == 0
    assert proc.stderr == (
        f"{text}: text, header line 1 'ICML 2026 Papers' skipped, 1 abstract\n{jsonl}: JSONL, 1 abstract\n"
        f"wrote 2 abstracts from 2 files to {out}\n"
    )
    assert [json.loads(line)["text"] for line in out.read_text(encoding="utf-8").splitlines()] == [
        "We propose FooNet.",
        "An abstract.",
    ]
    kept = _cli("corpus", "build", str(text), "--no-header", "--out", str(out), "--force")
    assert kept.returncode == 0 and kept.stderr.startswith(f"{text}: text, no header line, 2 abstracts\n")
    lines = _abstracts(3)
    per_line = _write(tmp_path, "p.txt", "\n".join(lines).encode())
    refused = _cli("corpus", "build", str(per_line), "--out", str(out))
    assert refused.returncode == 2 and refused.stderr.startswith(
        f"error: {per_line}:1: one paragraph of 3 lines, 3 of them each a whole abstract"
    )
    assert "pass --one-per-line" in refused.stderr
    split = _cli("corpus", "build", str(per_line), "--one-per-line", "--out", str(out), "--force")
    assert split.returncode == 0 and split.stderr.startswith(f"{per_line}: text, no header line, 3 abstracts\n")
    assert [json.loads(line)["line"] for line in out.read_text(encoding="utf-8").splitlines()] == [1, 2, 3]
    folder = _cli("corpus", "build", str(tmp_path), "--out", str(out))
    assert (
        folder.returncode == 2
        and folder.stderr
        == f"error: {tmp_path}: is a directory, not a file; pass the files in it, e.g. {tmp_path / '*.txt'}\n"
    )


def test_cli_build_prints_the_header_warning(tmp_path):
    path = _write(tmp_path, "noheader.txt", b"We propose FooNet.\n\nSecond abstract.\n")
    proc = _cli("corpus", "build", str(path), "--out", str(tmp_path / "c.jsonl"))
    assert proc.returncode == 0
    assert proc.stderr == (
        f"warning: {path}:1: line 1 is read as the first abstract, not as a header line (it ends with '.'); "
        f"pass --header if it is a header\n{path}: text, no header line, 2 abstracts\n"
        f"wrote 2 abstracts from 1 file to {tmp_path / 'c.jsonl'}\n"
    )


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
    with pytest.raises(CorpusError) as err:
        read_corpus_files([a, b])
    assert str(err.value) == f"{b}:3: duplicate abstract (same text as {a}:3)"


def test_duplicates_name_each_file_as_given_and_its_line(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "w").mkdir()
    _write(
        tmp_path / "x",
        "mine.jsonl",
        b'{"id": "a1", "text": "We propose FooNet."}\n\n{"id": "a1", "text": "We propose BarNet."}\n',
    )
    # a corpus JSONL carries its seed file's name and line: the error names the JSONL file and its line instead
    _write(
        tmp_path / "x",
        "built.jsonl",
        b'{"id": "b1", "text": "One.", "source": "seed.txt", "line": 40}\n'
        b'{"id": "b2", "text": "One.", "source": "seed.txt", "line": 44}\n',
    )
    _write(tmp_path / "x", "a.txt", b"H\n\nSame text.\n")
    _write(tmp_path / "x", "b.txt", b"H\n\nOther.\n\nSame  text.\n")

    def build(*files):
        return run_cli("corpus", "build", *files, "--out", "c.jsonl", cwd=tmp_path / "w")

    proc = build("../x/mine.jsonl")
    assert (
        proc.returncode == 2 and proc.stderr == "error: ../x/mine.jsonl:3: duplicate id 'a1' (also ../x/mine.jsonl:1)\n"
    )
    proc = build("../x/built.jsonl")
    assert (
        proc.returncode == 2
        and proc.stderr == "error: ../x/built.jsonl:2: duplicate abstract (same text as ../x/built.jsonl:1)\n"
    )
    proc = build("../x/a.txt", "../x/b.txt")
    assert (
        proc.returncode == 2 and proc.stderr == "error: ../x/b.txt:5: duplicate abstract (same text as ../x/a.txt:3)\n"
    )
    assert not (tmp_path / "w" / "c.jsonl").exists()


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

    (tmp_path / "gold").mkdir()
    shutil.copy(root / "gold" / "corpus.jsonl", tmp_path / "gold" / "corpus.jsonl")
    before = (tmp_path / "gold" / "corpus.jsonl").read_bytes()
    mine = tmp_path / "mine.txt"
    mine.write_text("Header\n\nWe propose FooNet, a method for bar.\n")
    env = dict(os.environ, PAPERFIELDS_ROOT=str(tmp_path))

    def build(*args):
        return run_cli("corpus", "build", *args, env=env)

    refused = build(str(mine))
    assert refused.returncode == 2 and "--out PATH" in refused.stderr and "--force" in refused.stderr
    assert (tmp_path / "gold" / "corpus.jsonl").read_bytes() == before
    forced = build(str(mine), "--force")
    assert forced.returncode == 0 and (tmp_path / "gold" / "corpus.jsonl").read_text().count("\n") == 1
    rebuilt = build(str(mine))  # a rebuild giving the same bytes needs no --force
    assert rebuilt.returncode == 0 and "wrote 1 abstract from 1 file to " in rebuilt.stderr


def test_cli_build_into_a_folder_or_an_unwritable_place_is_a_clean_error(tmp_path):
    path = _write(tmp_path, "seeds.txt", b"Header\n\nWe propose FooNet.\n")

    def build(out):
        return run_cli("corpus", "build", str(path), "--out", str(out))

    folder = build(tmp_path)
    assert (
        folder.returncode == 2 and f"--out {tmp_path} is a folder" in folder.stderr and "Traceback" not in folder.stderr
    )
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")
    unwritable = build(blocked / "c.jsonl")
    assert (
        unwritable.returncode == 2
        and f"cannot write {blocked / 'c.jsonl'}" in unwritable.stderr
        and "Traceback" not in unwritable.stderr
    )


def test_build_never_writes_over_the_benchmark_corpus_an_input_or_an_other_output_by_accident(tmp_path, root):
    import os
    import shutil

    (tmp_path / "gold").mkdir()
    shutil.copy(root / "gold" / "corpus.jsonl", tmp_path / "gold" / "corpus.jsonl")
    benchmark = (tmp_path / "gold" / "corpus.jsonl").read_bytes()
    mine = _write(tmp_path, "mine.txt", b"Header\n\nWe propose FooNet, a method for bar.\n")
    other = _write(tmp_path, "m2.txt", b"Header\n\nWe study BarNet, a model of baz.\n")
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "gold" / "corpus.jsonl")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = dict(os.environ, PAPERFIELDS_ROOT=str(tmp_path))

    def build(*args: str, cwd: Path = tmp_path):
        return run_cli("corpus", "build", *args, env=env, cwd=cwd)

    for out, cwd in [
        ("gold/corpus.jsonl", tmp_path),
        ("gold/../gold/corpus.jsonl", tmp_path),
        ("link.jsonl", tmp_path),
        ("../gold/corpus.jsonl", elsewhere),
        (str(tmp_path / "gold" / "corpus.jsonl"), elsewhere),
    ]:
        for force in ((), ("--force",)):
            refused = build(str(mine), "--out", out, *force, cwd=cwd)
            assert refused.returncode == 2, (out, force)
            assert refused.stderr.splitlines()[-1] == (
                f"error: --out {out} is the benchmark corpus {tmp_path / 'gold' / 'corpus.jsonl'} (gold "
                "labels refer to its ids); write a corpus of your own to another path, or rebuild the "
                "benchmark corpus from the seed files without --out"
            )
    assert (tmp_path / "gold" / "corpus.jsonl").read_bytes() == benchmark
    for out, cwd in [("m2.txt", tmp_path), ("./m2.txt", tmp_path), ("../m2.txt", elsewhere)]:
        refused = build(str(mine), str(other), "--out", out, "--force", cwd=cwd)
        assert refused.returncode == 2 and refused.stderr.splitlines()[-1] == (
            f"error: --out {Path(out)} is the input file {other}: writing it would replace "
            "the abstracts being read; give another --out path"
        )
    assert other.read_bytes() == b"Header\n\nWe study BarNet, a model of baz.\n"
    out = tmp_path / "mine.jsonl"
    assert build(str(mine), "--out", str(out)).returncode == 0
    again = build(str(mine), "--out", str(out))  # the same bytes: a rebuild needs no --force
    assert again.returncode == 0 and again.stderr.endswith(f"wrote 1 abstract from 1 file to {out}\n")
    refused = build(str(other), "--out", str(out))
    assert refused.returncode == 2 and refused.stderr.splitlines()[-1] == (
        f"error: --out {out} exists and holds something else; pass --force to replace it, or give another --out path"
    )
    assert json.loads(out.read_text(encoding="utf-8"))["text"] == "We propose FooNet, a method for bar."
    forced = build(str(other), "--out", str(out), "--force")
    assert (
        forced.returncode == 0
        and json.loads(out.read_text(encoding="utf-8"))["text"] == "We study BarNet, a model of baz."
    )


def test_the_name_decides_text_or_jsonl_and_errors_say_how_the_file_was_read(tmp_path):
    import warnings

    brace = _write(
        tmp_path,
        "brace.txt",
        b"{Braces} open this abstract: we propose B. It gets 3% more.\n\nSecond abstract. We propose C.\n",
    )
    notes = _write(tmp_path, "notes.md", b"{Braces} open this one: we propose D. It gets 4% more.\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [p.text for p in read_source(brace, header=False).papers] == [
            "{Braces} open this abstract: we propose B. It gets 3% more.",
            "Second abstract. We propose C.",
        ]
        assert read_source(notes, header=False).format == "text"
    jsonl_in_txt = _write(tmp_path, "c.txt", b'{"id": "x1", "text": "An abstract."}\n')
    with pytest.warns(UserWarning) as caught:
        assert read_source(jsonl_in_txt, header=False).format == "text"
    assert [str(w.message) for w in caught] == [
        f"{jsonl_in_txt}:1: read as text because the file is named *.txt, though line 1 is a JSON object; "
        "name the file *.jsonl if it is a JSONL corpus"
    ]
    sniffed = _write(tmp_path, "abstracts", b'{"id": "x1", "text": "An abstract."}\n{"id": \n')
    with pytest.raises(CorpusError) as err:
        read_source(sniffed)
    assert str(err.value) == (
        f"{sniffed}:2: not valid JSON (Expecting value); read as JSONL because its first non-blank line "
        "starts with '{'; a JSONL corpus holds one JSON object per line"
    )


def test_a_file_given_twice_is_said_so_not_a_duplicate_abstract(tmp_path):
    from paperfields.core.corpus import check_given_once

    path = _write(tmp_path, "weird.txt", b"Header\n\nWe propose FooNet, a method for bar.\n")
    (tmp_path / "sub").mkdir()
    with pytest.raises(CorpusError) as err:
        read_corpus_files([path, path])
    assert str(err.value) == f"{path}: given twice; give each file once"
    other = tmp_path / "sub" / ".." / "weird.txt"
    with pytest.raises(CorpusError) as err:
        check_given_once([path, other])
    assert str(err.value) == f"{other}: given twice (also as {path}); give each file once"
    proc = _cli("corpus", "build", str(path), str(other), "--out", str(tmp_path / "c.jsonl"))
    assert (
        proc.returncode == 2 and proc.stderr == f"error: {other}: given twice (also as {path}); give each file once\n"
    )


def test_jsonl_keys_a_corpus_record_does_not_hold_are_listed_once(tmp_path):
    path = _write(
        tmp_path,
        "extra.jsonl",
        b'{"id": "a1", "text": "We propose X.", "extra": 1}\n'
        b'{"id": "a2", "text": "We propose Y.", "title": "Y", "extra": 2, "line": 9}\n',
    )
    with pytest.warns(UserWarning) as caught:
        source = read_source(path)
    assert [str(w.message) for w in caught] == [
        f"{path}: 2 keys ignored, not part of a corpus record: 'extra' (first on line 1), 'title' (first on line 2); "
        "a record keeps id, text, source, position, line, public_date"
    ]
    assert [p.text for p in source.papers] == ["We propose X.", "We propose Y."]
    proc = _cli("corpus", "build", str(path), "--out", str(tmp_path / "c.jsonl"))
    assert proc.returncode == 0 and proc.stderr.startswith(
        f"warning: {path}: 2 keys ignored, not part of a corpus record: "
    )


@pytest.mark.parametrize(
    "line, warns",
    [
        ("We propose FooNet.", True),  # a title's size, one sentence: only its '.' kept it from being the header
        ("Abstracts, collected 2026-01-05 from arXiv cs.CL.", True),
        ("We propose DupNet. It gets 5% better.", False),  # two sentences: no header is
        ("x" * 121 + ".", False),  # over 120 characters: never a header by the rule
        (" ".join(["word"] * 16) + ".", False),  # over 15 words
        (LONG[:289] + ".", False),  # a 290-character abstract on one line (the case that warned)
    ],
)
def test_the_header_warning_fires_only_when_line_1_may_be_a_header_all_the_same(tmp_path, line, warns):
    import warnings

    from paperfields.core.corpus import header_is_ambiguous

    path = _write(tmp_path, "a.txt", f"{line}\n\nSecond abstract. We propose C.\n".encode())
    assert header_is_ambiguous(line) is warns
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        papers = read_source(path).papers
    assert [p.text for p in papers] == [line, "Second abstract. We propose C."]
    assert [str(w.message) for w in caught] == (
        [
            f"{path}:1: line 1 is read as the first abstract, not as a header line "
            f"({header_looks_like_abstract([line])}); pass --header if it is a header"
        ]
        if warns
        else []
    )
