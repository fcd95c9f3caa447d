"""The figure cache and its worker processes (paperfields/figures.py): the same bytes however a figure is
made, a changed input always drawn again, the cache switched off by PAPERFIELDS_PLOT_CACHE=off."""

from __future__ import annotations

import json
from concurrent.futures import wait

import pytest

from paperfields import figures
from paperfields.plots import draw_reliability
from paperfields.report import draw_field_bars, field_bars
from paperfields.scoring.score import RunScores
from tests.conftest import ROOT

RUN = ROOT / "results" / "runs" / "local_qwen2.5-coder-0.5b__confidence__test"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERFIELDS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(figures.CACHE_SWITCH, raising=False)
    return tmp_path / "cache" / "plots"


@pytest.fixture(scope="module")
def scores() -> RunScores:
    return RunScores.model_validate(json.loads((RUN / "scores.json").read_text(encoding="utf-8")))


def test_a_figure_has_the_same_bytes_drawn_here_in_a_worker_and_from_the_cache(cache, scores):
    draw, inputs = field_bars(scores)
    here = draw(*inputs)
    with figures.drawing(workers=1):
        figures.submit(draw, *inputs)
        figures.submit(draw_reliability, scores)
        started = list(figures._SESSION.get().started.values())
        assert len(started) == 2
        wait(started)  # both drawn by the worker: png cannot take them over (it draws what no worker has begun)
        from_worker = figures.png(draw, *inputs)
        reliability = figures.png(draw_reliability, scores)
    assert from_worker == here and here.startswith(b"\x89PNG")
    assert sorted(p.suffix for p in cache.iterdir()) == [".png", ".png"]  # both kept, no temporary file left
    assert figures.png(draw, *inputs) == here  # from the cache: nothing drawn
    assert figures.png(draw_reliability, scores) == reliability == draw_reliability(scores)


def test_a_changed_input_is_drawn_again_never_served_from_the_cache(cache, scores):
    values, cis = field_bars(scores)[1]
    first = figures.png(draw_field_bars, values, cis)
    changed, changed_cis = values[::-1], cis[::-1]  # the same bars in another order
    second = figures.png(draw_field_bars, changed, changed_cis)
    assert second != first and second == draw_field_bars(changed, changed_cis)
    assert len(list(cache.glob("*.png"))) == 2
    # a run's scores as a whole are the key: a field no file shows (excluded from scores.json) counts too
    other = scores.model_copy(update={"papers_asked": (scores.papers_asked or 0) + 1})
    assert figures.inputs_key(draw_reliability, (other,)) != figures.inputs_key(draw_reliability, (scores,))
    # and an int is not the float it equals, nor a string its spelling
    keys = {figures.inputs_key(draw_field_bars, (v, cis)) for v in ([1], [1.0], ["1.0"], [True])}
    assert len(keys) == 4


def test_a_poisoned_cache_file_is_what_png_returns_so_the_key_must_name_everything(cache, scores):
    """The key is the only check: a file under it is returned as is (this is why every input is in the key)."""
    values, cis = field_bars(scores)[1]
    cache.mkdir(parents=True)
    (cache / f"{figures.inputs_key(draw_field_bars, (values, cis))}.png").write_bytes(b"kept")
    assert figures.png(draw_field_bars, values, cis) == b"kept"
    assert figures.png(draw_field_bars, values[::-1], cis[::-1]) != b"kept"


def test_figures_queued_behind_a_busy_worker_have_the_same_bytes_whoever_draws_them(cache, scores):
    values, cis = field_bars(scores)[1]
    with figures.drawing(workers=1):
        figures.submit(draw_reliability, scores)  # the worker's first figure: it takes a while
        for i in range(len(values)):  # more figures queued behind it: the command draws those it asks first
            figures.submit(draw_field_bars, values[i:] + values[:i], cis[i:] + cis[:i])
        last = figures.png(draw_field_bars, values[-1:] + values[:-1], cis[-1:] + cis[:-1])
    assert last == draw_field_bars(values[-1:] + values[:-1], cis[-1:] + cis[:-1])


def test_plot_cache_off_draws_every_time_and_keeps_nothing(cache, scores, monkeypatch):
    monkeypatch.setenv(figures.CACHE_SWITCH, "off")
    draw, inputs = field_bars(scores)
    assert figures.cache_dir() is None
    assert figures.png(draw, *inputs) == draw(*inputs)
    assert not cache.exists()


def test_the_code_version_follows_matplotlibs_settings(monkeypatch):
    import matplotlib

    figures.code_version.cache_clear()
    before = figures.code_version()
    monkeypatch.setitem(matplotlib.rcParams, "lines.linewidth", matplotlib.rcParams["lines.linewidth"] + 1)
    figures.code_version.cache_clear()
    try:
        assert figures.code_version() != before
    finally:
        monkeypatch.undo()
        figures.code_version.cache_clear()
    assert figures.code_version() == before


def test_an_input_that_is_not_plain_data_is_refused_not_hashed_by_its_repr():
    with pytest.raises(TypeError, match="plain data"):
        figures.inputs_key(draw_field_bars, (object(), []))
