"""Issue 34 item 17 (the run side): a key in ``--base-url`` (its userinfo or its query string) and any
key-shaped string a server sends never reach the manifest, the predictions, the response cache, the
printed output or the cache key; one function masks them (``paperfields.core.runlog.redact_secrets``)."""

from __future__ import annotations

import json
import os

import pytest

from paperfields.core.runlog import redact_secrets, secret_kind, url_secrets
from tests.cli_in_process import run_cli
from tests.openai_stub import VALID, reply

# made-up keys of each shape (none is a real key)
KEYS = {
    "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t": "sk-***",
    "sk-ant-api03-AAAABBBBCCCCDDDD": "sk-***",
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345": "hf_***",
    "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789": "gh*_***",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnop": "github_pat_***",
    "AKIAIOSFODNN7EXAMPLE": "AKIA***",
    "xoxb-123456789012-abcdefghijklmn": "xox*-***",
}


@pytest.mark.parametrize("key, mask", KEYS.items())
def test_every_key_shape_is_masked_and_named(key, mask):
    text = f'error 401: invalid key "{key}", try again'
    assert redact_secrets(text) == f'error 401: invalid key "{mask}", try again'
    assert secret_kind(text) is not None and secret_kind(redact_secrets(text)) is None


def test_urls_bearer_tokens_and_what_must_stay():
    assert redact_secrets("http://user:hunter2-pass@127.0.0.1:8080/v1") == "http://user:***@127.0.0.1:8080/v1"
    assert redact_secrets("https://h/v1?api_key=abc123456&x=1&token=zzz") == "https://h/v1?api_key=***&x=1&token=***"
    assert redact_secrets("https://generativelanguage.googleapis.com/v1?key=AIzaSyA-123") == (
        "https://generativelanguage.googleapis.com/v1?key=***"
    )
    assert redact_secrets("Authorization: Bearer abc.def-ghi_jkl") == "Authorization: Bearer ***"
    assert secret_kind("http://u:p@h/v1") == "a password in a URL"
    assert url_secrets("http://user:pw-123@h/v1?api_key=k1&api-version=2024-06-01") == ("pw-123", "k1")
    # ordinary text and URLs are left as they are, and a record's JSON keeps its structure
    for plain in (
        "task-relevant, risk-sensitive and disk-based methods",
        "http://127.0.0.1:8080/v1",
        "https://github.com/org/repo?tab=readme",
        "the hf_ prefix; AKIA is four letters",
        "contact a@b.org",
    ):
        assert redact_secrets(plain) == plain
    record = json.dumps({"code_url": "https://u:p4ss@h/x", "notes": "mail x@y"})
    assert json.loads(redact_secrets(record)) == {"code_url": "https://u:***@h/x", "notes": "mail x@y"}


def test_a_key_in_the_base_url_is_masked_in_everything_the_run_writes_and_prints(tmp_path, stub):
    secret_password, secret_query = "sk-url-userinfo-0123456789", "query-secret-0123456789"
    echoed = "hf_EchoedTokenAbCdEfGhIjKlMnOpQr"  # a key-shaped string in the model's own reply
    record = json.loads(VALID) | {"method_name": f"Net {echoed}"}
    stub.default = reply(json.dumps(record))
    host = stub.url.removeprefix("http://")
    base_url = f"http://user:{secret_password}@{host}?api_key={secret_query}"
    runs = tmp_path / "runs"
    done = run_cli(
        "run", "-b", "openai/m", "--base-url", base_url, "--limit", "2", "--runs-dir", str(runs), "--run-id", "k",
        env=dict(os.environ, COLUMNS="250"),
    )  # fmt: skip
    assert done.returncode == 0, done.output
    assert len(stub.requests) == 2  # the server was reached (the key in the URL is sent, just never written)
    written = {p.name: p.read_bytes() for p in (runs / "k").iterdir() if p.is_file()}
    cache = tmp_path / "responses.sqlite"  # the hermetic response cache
    assert cache.is_file()
    written["cache"] = b"".join(p.read_bytes() for p in tmp_path.glob("responses.sqlite*"))
    written["output"] = done.output.encode()
    for name, data in written.items():
        for secret in (secret_password, secret_query, echoed):
            assert secret.encode() not in data, f"{secret} in {name}"
    manifest = json.loads(written["manifest.json"])
    assert manifest["config"]["base_url"] == f"http://user:***@{host}?api_key=***"
    lines = [json.loads(line) for line in written["predictions.jsonl"].splitlines()]
    assert {line["record"]["method_name"] for line in lines} == {"Net hf_***"}
    # the same URL again resumes the same run (the masked config is what it is compared by)
    again = run_cli(
        "run", "-b", "openai/m", "--base-url", base_url, "--limit", "2", "--runs-dir", str(runs), "--run-id", "k"
    )
    assert again.returncode == 0, again.output
    assert len(stub.requests) == 2


def test_a_key_in_the_url_is_sent_as_the_api_key_and_named_nowhere(tmp_path, stub):
    stub.default = reply(delay=5)  # far beyond the timeout: the client gives up first, whatever the machine
    base_url = stub.url.replace("http://", "http://me:sk-timeout-key-0123456789@")
    done = run_cli(
        "run", "-b", "openai/m", "--base-url", base_url, "--timeout", "0.2", "--retries", "0", "--limit", "1",
        "--runs-dir", str(tmp_path / "runs"), "--no-score",
    )  # fmt: skip
    assert done.returncode == 1
    assert "sk-timeout-key-0123456789" not in done.output + "".join(
        p.read_text() for p in (tmp_path / "runs").rglob("*.json*")
    )
    assert f"server {stub.url})" in " ".join(done.output.split())  # named without the credentials it was given
    headers = {k.lower(): v for k, v in stub.requests[0]["headers"].items()}
    assert headers["authorization"] == "Bearer sk-timeout-key-0123456789"  # sent as the key
