"""Field facts are declared once, on the schema: a field added there (with its facts) is scored end to
end with no other code touched, and the facts stay out of the JSON schema models see."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import Field, create_model

from paperfields.core.fields import FieldFacts, record_fields, scores_of
from paperfields.core.gold import GoldRecord, gold_strings
from paperfields.core.schema import LIST_FIELDS, PaperRecord, TextList
from paperfields.scoring.score import HEADLINE_FIELDS, REPORTED_FIELDS, headline, score_paper, score_predictions

ABSTRACTS = {
    "p1": "We release ToyNet and ToyBench, evaluated against OldNet.",
    "p2": "Our method, ToyMix, is compared with ToyBase on a toy task.",
    "p3": "We study nothing in particular.",
}
# The toy field's gold and predictions: p1 one right, one invented ("Unknown Thing"), one missed
# ("ToyBench"); p2 one right ("ToyMix" ~ "ToyMix"), nothing else; p3 empty on both sides.
TOY_GOLD = {"p1": ["ToyNet", "ToyBench"], "p2": ["ToyMix"], "p3": []}
TOY_PRED = {"p1": ["ToyNet", "Unknown Thing"], "p2": ["ToyMix"], "p3": []}


def toy_schema(headline: bool):
    """PaperRecord with one more list field, ``toy_items``, its facts on its annotation only."""
    facts = FieldFacts(match="name", short="toys", headline=headline, grounded="text")
    return create_model(
        "ToyRecord",
        __base__=PaperRecord,
        toy_items=(
            Annotated[TextList, facts],
            Field(default_factory=list, description="Toy things named in the abstract."),
        ),
    )


def toy_gold(model) -> list[GoldRecord]:
    gold_model = create_model("ToyGold", __base__=GoldRecord, record=(model, ...))
    return [gold_model(id=pid, split="test", record=model(toy_items=items)) for pid, items in TOY_GOLD.items()]


def test_facts_are_invisible_in_the_json_schema_and_derive_the_tables():
    schema = PaperRecord.model_json_schema()
    standard = {"description", "items", "title", "type", "default", "anyOf", "enum", "$ref"}
    assert all(set(prop) <= standard for prop in schema["properties"].values())  # no fact leaks into a property
    assert schema["properties"]["tasks"] == {
        "description": PaperRecord.model_fields["tasks"].description,
        "items": {"type": "string"},
        "title": "Tasks",
        "type": "array",
    }
    names = [f.name for f in record_fields(PaperRecord)]
    assert names == list(PaperRecord.model_fields)  # every field declares its facts
    assert HEADLINE_FIELDS == tuple(PaperRecord.model_fields) and len(HEADLINE_FIELDS) == 12
    assert REPORTED_FIELDS[12:] == ("method_name_soft", "method_full_name_soft", "results_value", "results_full")
    assert LIST_FIELDS == ("tasks", "datasets", "models", "metrics", "baselines")
    # the toy's facts change the JSON schema only by the field itself (its description, its type)
    toy = toy_schema(headline=True).model_json_schema()
    assert set(toy["properties"]) - set(schema["properties"]) == {"toy_items"}
    assert toy["properties"]["toy_items"] == {
        "description": "Toy things named in the abstract.",
        "items": {"type": "string"},
        "title": "Toy Items",
        "type": "array",
    }


@pytest.mark.parametrize("in_headline", [True, False])
def test_a_toy_field_is_scored_end_to_end_from_its_facts_alone(in_headline):
    model = toy_schema(in_headline)
    gold = toy_gold(model)
    predictions = {pid: model(toy_items=items).model_dump(mode="json") for pid, items in TOY_PRED.items()}

    counts = {g.id: score_paper(predictions[g.id], g, ABSTRACTS[g.id])["toy_items"] for g in gold}
    assert counts == {"p1": (1, 1, 1), "p2": (1, 0, 0), "p3": (0, 0, 0)}
    assert score_paper(None, gold[0], ABSTRACTS["p1"])["toy_items"] == (0, 0, 2)  # a failed paper misses gold

    scores, detail = score_predictions(predictions, gold, abstracts=ABSTRACTS)
    toy = scores.fields["toy_items"]
    assert (toy.tp, toy.fp, toy.fn) == (2, 1, 1) and toy.metric == "micro_f1"
    assert toy.score == pytest.approx(2 * 2 / (2 * 2 + 1 + 1), abs=1e-4)
    assert (
        scores.field_rules["toy_items"]["match"] == "name"
        and scores.field_rules["toy_items"]["headline"] is in_headline
    )
    assert "rule" in scores.match_rules["name"]  # the similarity rule's settings are recorded
    # every other field is right (gold and prediction are both the default record): the headline is
    # the mean over the defined headline fields, the toy field among them only when its facts say so
    defined = {name: a.score for name, a in scores.fields.items() if a.score is not None}
    headline_names = [s.name for s in scores_of(model) if s.headline]
    assert ("toy_items" in headline_names) is in_headline
    expected = sum(defined[n] for n in headline_names if n in defined) / sum(n in defined for n in headline_names)
    assert scores.headline == pytest.approx(expected, abs=1e-4)
    # defined: research_area and training_free (accuracy 1.0: both
    # the default), and the toy field (F1 2/3) when in the headline
    assert scores.headline == (pytest.approx((1.0 + 1.0 + 2 / 3) / 3, abs=1e-4) if in_headline else 1.0)
    assert ("toy_items" in scores.undefined_fields) is False and "tasks" in scores.undefined_fields
    assert (
        headline([row for row in (score_paper(predictions[g.id], g, ABSTRACTS[g.id]) for g in gold)], model)[0]
        == scores.headline
    )
    # grounded as its facts say: "ToyNet" and "ToyMix" are written in their abstracts, "Unknown Thing" is not
    assert scores.grounding["toy_items"]["predicted"] == 3 and scores.grounding["toy_items"][
        "grounded_rate"
    ] == pytest.approx(2 / 3, abs=1e-4)
    assert detail[0]["invented"]["toy_items"] is None and detail[2]["invented"]["toy_items"] == 0
    # the gold check finds the toy strings in the abstract
    assert ("toy_items[1]", "ToyBench") in gold_strings(gold[0].record)
