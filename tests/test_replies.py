"""Issue 24: every reply read or classed right, and every run fault survived with a clear word.

Each numbered item of the issue, replayed through the real ``openai`` client and ``instructor`` over
HTTP against the scripted stub server (tests/openai_stub.py); the damaged cache and the full disk
through the CLI. Several spellings of each fault, so the kind is fixed and not the example.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from paperfields.core.runlog import GenerationParams, load_manifest, read_predictions
from paperfields.extract.backends import GenerationRequest, get_backend
from tests.cli_in_process import run_cli
from tests.openai_stub import VALID, StubServer, reply

MESSAGES = [{"role": "system", "content": "Extract."}, {"role": "user", "content": "Abstract: We propose StubNet."}]
MODES = ["md_json", "json", "json_schema", "tools"]
ROOT = Path(__file__).resolve().parents[1]


def _generate(stub, script, **options):
    stub.script[:] = script
    backend = get_backend("openai/stub-model", base_url=stub.url, **options)
    return asyncio.run(backend.generate(GenerationRequest(messages=MESSAGES, params=GenerationParams(max_tokens=256))))


def _with_value(value, *more):
    results = [{"metric": "throughput", "value": value, "unit": "count", "kind": "absolute"}]
    results += [{"metric": f"m{i}", "value": v, "unit": "count", "kind": "absolute"} for i, v in enumerate(more)]
    return json.dumps({"method_name": "X", "results": results}, ensure_ascii=False)


# 1. Numbers in scientific or shorthand notation are read; one that cannot be read costs its item only.

NOTATIONS = [
    ("2.5×10^3", 2500.0),
    ("2.5 \\times 10^{3}", 2500.0),
    ("10^4", 10000.0),
    ("$10^{3}$", 1000.0),
    ("1.2k", 1200.0),
    ("56.61 percent", 56.61),
    ("3 \\cdot 10^{-2}", 0.03),
    ("4·10⁵", 400000.0),
    ("1.5B", 1.5e9),
    ("2 million", 2e6),
    ("35K", 35000.0),
    ("2.5e3", 2500.0),
    ("$1.2 \\times 10^{6}$", 1.2e6),
    ("7 x 10^2", 700.0),
]


@pytest.mark.parametrize("mode", ["md_json", "json_schema"])
@pytest.mark.parametrize("written, stored", NOTATIONS, ids=[n[0] for n in NOTATIONS])
def test_1_numbers_in_scientific_and_shorthand_notation(stub, mode, written, stored):
    gen = _generate(stub, [reply(_with_value(written))] * 2, mode=mode)
    assert gen.failure is None, gen.error
    assert gen.record["results"][0]["value"] == pytest.approx(stored) and "number_text" in gen.repairs
    assert len(stub.requests) == 1  # no re-ask


@pytest.mark.parametrize("unreadable", ["about five", "12m", "5 apples", "n/a", "1e3k", "12.5 or 13"])
def test_1_an_unreadable_value_drops_that_item_only(stub, unreadable):
    gen = _generate(stub, [reply(_with_value(unreadable, 7, "41.5%"))] * 2)
    assert gen.failure is None and gen.record["method_name"] == "X"
    assert [r["value"] for r in gen.record["results"]] == [7, 41.5] and "result_dropped" in gen.repairs
    assert len(stub.requests) == 1


# 2. A list field written as a string.

LIST_TEXT = [
    ('"[\\"GSM8K\\", \\"MATH\\"]"', ["GSM8K", "MATH"]),
    ('"GSM8K, MATH"', ["GSM8K", "MATH"]),
    ('"GSM8K"', ["GSM8K"]),
    ('"GSM8K; MATH; HumanEval"', ["GSM8K", "MATH", "HumanEval"]),
    ('"[]"', []),
    ('" [\\"A\\"] "', ["A"]),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("written, stored", LIST_TEXT, ids=[n[0] for n in LIST_TEXT])
def test_2_a_list_written_as_a_string(stub, mode, written, stored):
    gen = _generate(
        stub, [reply('{"method_name": "X", "datasets": %s, "tasks": "math word problems"}' % written)] * 2, mode=mode
    )
    assert gen.failure is None, gen.error
    assert (
        gen.record["datasets"] == stored
        and gen.record["tasks"] == ["math word problems"]
        and "list_text" in gen.repairs
    )
    assert len(stub.requests) == 1


def test_2_a_stored_line_is_still_read_strictly():
    from pydantic import ValidationError

    from paperfields.core.runlog import PredictionLine

    with pytest.raises(ValidationError, match="datasets"):
        PredictionLine(paper_id="p", record={"datasets": "GSM8K, MATH"})


# 2b. The evidence strategy's quoted lists get the same repairs: a list written as a string is read (its
# items have no quote, so the strategy drops them as unquoted), and an item that does not validate costs
# that item only, never the record.

EVIDENCE_ABSTRACT = "We propose StubNet for math word problems. StubNet reaches 41.5% accuracy on GSM8K."
EVIDENCE_REPLIES = [
    # a quoted list written as a string; the other list and the results quoted as asked
    (
        {"tasks": "math word problems, algebra", "datasets": [{"value": "GSM8K", "quote": "on GSM8K"}]},
        {"tasks": [], "datasets": ["GSM8K"]},
        {"list_text"},
        2,
    ),
    # a quoted item that is not an item (a number, an object without its value); one written bare
    (
        {
            "tasks": [{"value": "math word problems", "quote": "for math word problems"}, 7, {"quote": "StubNet"}],
            "datasets": ["GSM8K"],
        },
        {"tasks": ["math word problems"], "datasets": []},
        {"item_dropped"},
        1,
    ),
    # a quoted result whose value no parser reads beside one that reads
    (
        {
            "results": [
                {"metric": "accuracy", "value": "forty-one", "unit": "percent", "kind": "absolute", "quote": "41.5%"},
                {
                    "metric": "accuracy",
                    "value": "41.5%",
                    "unit": "percent",
                    "kind": "absolute",
                    "quote": "41.5% accuracy",
                },
            ]
        },
        {"results": [41.5]},
        {"result_dropped"},
        0,
    ),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "answer, kept, repairs, unquoted", EVIDENCE_REPLIES, ids=["list_text", "item_dropped", "result_dropped"]
)
def test_2b_evidence_quoted_lists_get_the_record_repairs(stub, tmp_path, mode, answer, kept, repairs, unquoted):
    from paperfields.core.corpus import Paper
    from paperfields.core.runlog import RunConfig
    from paperfields.extract.runner import run_extraction
    from paperfields.extract.strategies import Strategy

    stub.script[:] = [reply(json.dumps({"method_name": "StubNet", **answer}))] * 2
    strategy = Strategy("evidence")
    backend = get_backend("openai/stub-model", base_url=stub.url, mode=mode)
    config = RunConfig(
        backend="openai/stub-model",
        strategy="evidence",
        prompt_version=strategy.template.version,
        prompt_sha256=strategy.sha256,
        split="test",
    )
    paper = Paper(id="pstub", text=EVIDENCE_ABSTRACT, source="stub.txt", position=1, line=1)
    asyncio.run(run_extraction([paper], backend, strategy, config, tmp_path / "run"))
    (line,) = read_predictions(tmp_path / "run" / "predictions.jsonl")
    assert line.failure is None, line.error
    assert line.record["method_name"] == "StubNet"
    for field, values in kept.items():
        got = [r["value"] for r in line.record[field]] if field == "results" else line.record[field]
        assert got == values, field
    assert repairs <= set(line.repairs), line.repairs
    assert line.notes["dropped_unquoted"] == unquoted
    assert len(stub.requests) == 1


# 3. Trailing commas and the rest of JSON5.

TRAILING = [
    '{"datasets": ["GSM8K",],}',
    '{"datasets": ["GSM8K"], "method_name": "X",}',
    '{\n  "datasets": [\n    "GSM8K",\n  ],\n}',
    "{'datasets': ['GSM8K']}",
    '{"datasets": ["GSM8K"] // the benchmark\n}',
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("text", TRAILING)
def test_3_trailing_commas(stub, mode, text):
    gen = _generate(stub, [reply(text)] * 2, mode=mode)
    assert gen.failure is None, gen.error
    assert gen.record["datasets"] == ["GSM8K"] and "json5" in gen.repairs and len(stub.requests) == 1


def test_3_what_json5_cannot_read_is_still_malformed(stub):
    gen = _generate(stub, [reply('{"datasets": ["GSM8K",,]}')] * 2)
    assert gen.failure.value == "malformed_json" and "invalid JSON" in gen.error


# 4. The record in reasoning_content / reasoning with content null or empty; parser failures not cached from a server.


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
@pytest.mark.parametrize("content", [None, ""])
def test_4_the_record_in_the_reasoning_field(stub, mode, field, content):
    spec = reply(content, message={field: "The abstract names StubNet, so:\n" + VALID}, tool_call=False)
    gen = _generate(stub, [spec] * 2, mode=mode)
    assert gen.failure is None, gen.error
    assert gen.record["method_name"] == "StubNet" and gen.repairs[0] == "reasoning_field"


def test_4_reasoning_without_a_record_is_an_empty_reply(stub):
    gen = _generate(stub, [reply(None, message={"reasoning_content": "I think it is {a, b}."})] * 2)
    assert gen.failure.value == "empty_reply" and "reasoning field" in gen.error


def _cli(args, env):
    # in this process, as a fresh one would run it (tests/cli_in_process.py): a process of its own per call cost a
    # second of imports each; test_14_disk_full keeps real processes (it mounts a tmpfs in a namespace of its own)
    return run_cli(*args, env=env, cwd=ROOT)


def test_4_an_empty_reply_from_a_server_is_not_cached(stub, tmp_path):
    env = dict(os.environ, PAPERFIELDS_RESPONSE_CACHE=str(tmp_path / "cache.sqlite"))
    stub.default = reply(None)  # a misconfigured reasoning parser: nothing in content
    base = [
        "run",
        "-b",
        "openai/m",
        "--base-url",
        stub.url,
        "--limit",
        "1",
        "--runs-dir",
        str(tmp_path / "runs"),
        "--no-score",
    ]
    first = _cli(base + ["--run-id", "a"], env)
    assert first.returncode == 0, first.stderr
    assert read_predictions(tmp_path / "runs" / "a" / "predictions.jsonl")[0].failure.value == "empty_reply"
    asked = len(stub.requests)
    stub.default = reply()  # the server is fixed
    second = _cli(base + ["--run-id", "b"], env)
    assert second.returncode == 0, second.stderr
    line = read_predictions(tmp_path / "runs" / "b" / "predictions.jsonl")[0]
    assert line.failure is None and not line.cached and len(stub.requests) == asked + 1


# 5. A stray </think> ends the reasoning whatever it holds.

STRAY = [
    "Set {a, b}.</think>" + VALID,
    'Let me think: {"x": 1} looks wrong.\n</think>\n\n' + VALID,
    "<think>first</think> more {thought} </think>" + VALID,
    "okay [1, 2] {</THINK>" + VALID,
]


@pytest.mark.parametrize("text", STRAY)
def test_5_a_stray_closing_think_tag(stub, text):
    gen = _generate(stub, [reply(text)] * 2)
    assert gen.failure is None, gen.error
    assert gen.record["method_name"] == "StubNet" and "think" in gen.repairs and len(stub.requests) == 1


# 6. message.refusal set is a refusal, whatever its wording.


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("words", ["Non posso aiutarti con questo.", "This request violates policy.", "Declined."])
def test_6_the_refusal_field(stub, mode, words):
    gen = _generate(stub, [reply(None, message={"refusal": words}, tool_call=False)] * 2, mode=mode)
    assert gen.failure.value == "refusal" and words in gen.error and gen.record is None


# 7. Duplicate keys are named: the same value a repair, different values refused like two objects.


def test_7_duplicate_keys(stub):
    same = _generate(stub, [reply('{"datasets": ["GSM8K"], "method_name": "X", "datasets": ["GSM8K"]}')] * 2)
    assert same.failure is None and same.record["datasets"] == ["GSM8K"] and same.repairs == ["duplicate_keys"]
    for text in (
        '{"datasets": ["GSM8K"], "datasets": []}',
        '{"results": [{"metric": "acc", "value": 1, "value": 2, "unit": "percent", "kind": "absolute"}]}',
        '{"datasets": ["GSM8K"], "datasets": [],}',
    ):
        stub.requests.clear()
        gen = _generate(stub, [reply(text)] * 2)
        assert gen.failure.value == "malformed_json" and "duplicate key" in gen.error, (text, gen.error)
        assert gen.error in stub.requests[1]["body"]["messages"][-1]["content"]  # the re-ask says what to fix


# 8. An HTTP 200 whose body is an error keeps the server's message.


@pytest.mark.parametrize(
    "body, message",
    [
        ({"error": {"message": "CUDA out of memory", "code": 500}}, "CUDA out of memory"),
        ({"error": "upstream model crashed"}, "upstream model crashed"),
        ({"object": "error", "error": {"message": "Model is loading"}}, "Model is loading"),
    ],
)
def test_8_a_200_with_an_error_body(stub, body, message):
    stub.default = reply(body=json.dumps(body))
    gen = _generate(stub, [])
    assert gen.failure.value == "transport_error" and message in gen.error and "the server's error" in gen.error


# 9. A damaged response cache: moved aside, said where, and the run goes on with an empty cache.


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2 + 100])
    elif how == "garbage header":
        path.write_bytes(b"this is not a database!" * 10 + data[230:])
    else:  # damaged pages: every page after the first overwritten
        path.write_bytes(data[:4096] + bytes([0x5A]) * (len(data) - 4096))


@pytest.mark.parametrize("how", ["truncated", "garbage header", "damaged pages"])
def test_9_a_damaged_cache(stub, tmp_path, how):
    cache = tmp_path / "responses.sqlite"
    env = dict(os.environ, PAPERFIELDS_RESPONSE_CACHE=str(cache))
    base = [
        "run",
        "-b",
        "openai/m",
        "--base-url",
        stub.url,
        "--limit",
        "3",
        "--runs-dir",
        str(tmp_path / "runs"),
        "--no-score",
    ]
    first = _cli(base + ["--run-id", "a"], env)
    assert first.returncode == 0, first.stderr
    import sqlite3

    with sqlite3.connect(cache) as db:  # fold the WAL into the file, so the damage hits the rows
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for extra in (Path(str(cache) + "-wal"), Path(str(cache) + "-shm")):
        extra.unlink(missing_ok=True)
    if how == "damaged pages" and cache.stat().st_size <= 4096:
        _cli(base + ["--run-id", "fill", "--limit", "30", "--split", "all"], env)  # enough rows for a second page
    _damage(cache, how)
    second = _cli(base + ["--run-id", "b"], env)
    assert second.returncode == 0, second.stderr
    assert "Traceback" not in second.stderr and "is damaged" in second.stderr and ".corrupt-" in second.stderr
    # the damaged file, moved aside and named (its -wal and -shm, where sqlite left them, go beside it unnamed)
    moved = [p for p in tmp_path.iterdir() if ".corrupt-" in p.name and not p.name.endswith(("-wal", "-shm"))]
    assert len(moved) == 1 and str(moved[0]) in second.stderr.replace("\n", "")
    lines = read_predictions(tmp_path / "runs" / "b" / "predictions.jsonl")
    assert len(lines) == 3 and all(line.failure is None and not line.cached for line in lines)
    third = _cli(base + ["--run-id", "c"], env)  # the new cache works: every answer from it
    assert third.returncode == 0 and "is damaged" not in third.stderr
    assert all(line.cached for line in read_predictions(tmp_path / "runs" / "c" / "predictions.jsonl"))


# 10. --timeout and --retries, in run --help and pf.run, recorded in the manifest.


def test_10_timeout_and_retries(stub, tmp_path):
    import paperfields.api as pf

    help_text = _cli(["run", "--help"], dict(os.environ, COLUMNS="200")).stdout
    assert "--timeout" in help_text and "--retries" in help_text
    stub.script[:] = [
        reply(delay=3.0),
        reply(delay=3.0),
    ]  # hung answers: each request gives up after its timeout, once retried
    pf.run(
        ["We propose StubNet, a network."],
        backend="openai/m",
        base_url=stub.url,
        split="all",
        runs_dir=tmp_path,
        run_id="t",
        timeout=0.5,
        retries=1,
        cache=False,
        score=False,
    )
    line = read_predictions(tmp_path / "t" / "predictions.jsonl")[0]
    assert line.failure.value == "transport_error" and "Timeout" in line.error and len(stub.requests) == 2
    assert load_manifest(tmp_path / "t").request_options == {"timeout_s": 0.5, "transport_retries": 1}
    again = pf.run(
        ["We propose StubNet, a network."],
        backend="openai/m",
        base_url=stub.url,
        split="all",
        runs_dir=tmp_path,
        run_id="t",
        timeout=30,
        cache=False,
        score=False,
    )  # a resume may change them: no reply depends on them
    assert again.manifest.papers_valid == 1 and again.manifest.request_options == {
        "timeout_s": 30.0,
        "transport_retries": 4,
    }
    with pytest.raises(Exception, match="--timeout"):
        pf.run(["x"], backend="rules/empty", split="all", runs_dir=tmp_path, timeout=5)


# 11. A server that admits fewer requests than sent: adapt, finish
# in one run, count the 429s; transport errors exit non-zero.


def test_11_concurrency_adapts_to_429s(tmp_path):
    with StubServer(default=reply(delay=0.05)) as server:
        server.capacity, server.retry_after = 4, "0.1"
        env = dict(os.environ, PAPERFIELDS_RESPONSE_CACHE=str(tmp_path / "cache.sqlite"))
        corpus = tmp_path / "corpus.jsonl"
        corpus.write_text(
            "".join(
                json.dumps({"id": f"p{i}", "text": f"Abstract {i}: we propose StubNet{i}."}) + "\n" for i in range(60)
            )
        )
        done = _cli(
            [
                "run",
                "-b",
                "openai/m",
                "--base-url",
                server.url,
                "--corpus",
                str(corpus),
                "--split",
                "all",
                "--concurrency",
                "64",
                "--runs-dir",
                str(tmp_path / "runs"),
                "--run-id",
                "r",
                "--no-score",
            ],
            env,
        )
    assert done.returncode == 0, done.stderr
    manifest = load_manifest(tmp_path / "runs" / "r")
    assert manifest.papers_valid == 60 and manifest.failures_by_class == {}
    assert manifest.rate_limited > 0 and manifest.rate_limited == sum(1 for r in server.requests) - 60


def test_11_a_run_ending_with_transport_errors_exits_non_zero(stub, tmp_path):
    stub.script[:] = [reply()] + [reply(status=503)] * 10
    env = dict(os.environ, PAPERFIELDS_RESPONSE_CACHE=str(tmp_path / "cache.sqlite"))
    done = _cli(
        [
            "run",
            "-b",
            "openai/m",
            "--base-url",
            stub.url,
            "--limit",
            "2",
            "--retries",
            "1",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--run-id",
            "r",
            "--no-score",
        ],
        env,
    )
    assert done.returncode == 1 and "transport_error" in done.stderr and "exit status 1" in done.stderr


# 12. Decomposed Unicode (NFD) is composed when the corpus is built; offsets count on the stored text.


def test_12_nfd_text_is_composed(stub, tmp_path):
    from paperfields.core.corpus import load_corpus

    nfd = unicodedata.normalize("NFD", "We propose the Fréchet Score, which beats Gödel-Net by 3% on ÉvalBench.")
    assert nfd != unicodedata.normalize("NFC", nfd)
    seed = tmp_path / "seed.txt"
    seed.write_text(nfd + "\n", encoding="utf-8")
    out = tmp_path / "corpus.jsonl"
    built = _cli(["corpus", "build", str(seed), "--out", str(out)], dict(os.environ))
    assert built.returncode == 0, built.stderr
    paper = load_corpus(out)[0]
    assert paper.text == unicodedata.normalize("NFC", nfd)
    stub.default = reply(
        json.dumps({"method_name": "Fréchet Score", "datasets": ["ÉvalBench"], "baselines": ["Gödel-Net"]})
    )
    env = dict(os.environ, PAPERFIELDS_RESPONSE_CACHE=str(tmp_path / "cache.sqlite"))
    done = _cli(
        [
            "run",
            "-b",
            "openai/m",
            "--base-url",
            stub.url,
            "--corpus",
            str(out),
            "--split",
            "all",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--run-id",
            "r",
            "--no-score",
        ],
        env,
    )
    assert done.returncode == 0, done.stderr
    line = read_predictions(tmp_path / "runs" / "r" / "predictions.jsonl")[0]
    spans = line.grounding.model_dump()
    text = json.dumps(spans)
    assert "not_found" not in text, text
    start = paper.text.index("Fréchet Score")
    assert str(start) in text  # the span's offset is that of the stored (composed) text


# 13. Raw text is capped where it is kept, the cut marked.


def test_13_raw_text_is_capped(stub, tmp_path):
    from paperfields.core.runlog import RAW_TEXT_LIMIT

    stub.default = reply(VALID + " " * 3_000_000)
    env = dict(os.environ, PAPERFIELDS_RESPONSE_CACHE=str(tmp_path / "cache.sqlite"))
    done = _cli(
        [
            "run",
            "-b",
            "openai/m",
            "--base-url",
            stub.url,
            "--limit",
            "1",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--run-id",
            "r",
            "--no-score",
            "--max-tokens",
            "1000000",
        ],
        env,
    )
    assert done.returncode == 0, done.stderr
    predictions = tmp_path / "runs" / "r" / "predictions.jsonl"
    line = read_predictions(predictions)[0]
    assert line.failure is None and line.record["method_name"] == "StubNet"
    assert len(line.raw_text) < RAW_TEXT_LIMIT + 100 and line.raw_text.endswith("more characters cut by PaperFields]")
    assert (
        predictions.stat().st_size < 2 * RAW_TEXT_LIMIT
        and (tmp_path / "cache.sqlite").stat().st_size < 4 * RAW_TEXT_LIMIT
    )


# 14. A full disk names the path and leaves no manifest saying running; score's cut-line warning once.


def test_14_disk_full(stub, tmp_path):
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare to mount a small tmpfs")
    disk = tmp_path / "disk"
    disk.mkdir()
    stub.default = reply(VALID + " " * 40_000)  # lines of 40 kB: the next one cannot fit where the last one ended
    env = dict(os.environ, PAPERFIELDS_RESPONSE_CACHE=str(tmp_path / "cache.sqlite"))
    run = (
        f"{sys.executable} -m paperfields.cli run -b openai/m --base-url {stub.url} --runs-dir "
        f"{disk}/runs --run-id r --no-score --no-cache --limit"
    )
    script = f"""set -e
mount -t tmpfs -o size=256k tmpfs {disk}
{run} 1
dd if=/dev/zero of={disk}/spare bs=4k count=1 2>/dev/null
dd if=/dev/zero of={disk}/fill bs=4k 2>/dev/null || true
rm {disk}/spare
set +e
{run} 3
echo "exit=$?"
cat {disk}/runs/r/manifest.json
"""
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, env=env, timeout=300, cwd=ROOT
    )
    if "mount:" in done.stderr and "exit=" not in done.stdout:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    assert "exit=2" in done.stdout, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert f"{disk}/runs/r/predictions.jsonl: cannot write: the disk is full [Errno 28]" in done.stderr.replace(
        "\n", ""
    )
    manifest = json.loads(done.stdout.split("exit=2", 1)[1])
    assert manifest["status"] == "incomplete" and manifest["papers_valid"] == 1


def test_14_the_cut_line_warning_prints_once(stub, tmp_path):
    stub.script[:] = [reply(), reply()]
    env = dict(os.environ, PAPERFIELDS_RESPONSE_CACHE=str(tmp_path / "cache.sqlite"))
    done = _cli(
        [
            "run",
            "-b",
            "openai/m",
            "--base-url",
            stub.url,
            "--limit",
            "2",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--run-id",
            "r",
            "--no-score",
        ],
        env,
    )
    assert done.returncode == 0, done.stderr
    predictions = tmp_path / "runs" / "r" / "predictions.jsonl"
    with predictions.open("a") as fh:
        fh.write('{"paper_id": "cut')
    scored = _cli(["score", str(tmp_path / "runs" / "r")], env)
    assert scored.stderr.count("last line is cut off") == 1, scored.stderr
