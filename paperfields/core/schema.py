"""Schema v1: the structured record extracted from one paper abstract.

Every field has a description; the descriptions reach the JSON schema shown to models
(``PaperRecord.model_json_schema()``) and the gold guidelines (``gold/GUIDELINES.md``).
Changing a field, a description or an enum changes ``SCHEMA_VERSION``.

The fields' validators read what models write for the schema's values, without changing the JSON
schema: placeholders ("N/A", "null", "", ...) as null or dropped from lists, enum values in any case
and with spaces or hyphens, the unit and qualifier signs the descriptions name ("%", "x", "pp",
"~"), numbers written as text (:func:`parse_number`), "true"/"yes"/"no" for training_free; line
breaks and control characters in names become a space. Non-finite numbers are refused. Each
tolerated deviation is named in ``context["repairs"]`` when the caller passes a list there; such a
caller is reading a model's reply, and then a list written as a string is read (``list_text``) and a
result item that does not validate is left out (``result_dropped``) instead of failing the record.
"""

from __future__ import annotations

import json
import math
import re
from enum import Enum
from typing import Annotated, Any, Optional

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, ValidationInfo, model_validator

from paperfields.core.fields import FieldFacts, Level, record_fields

SCHEMA_VERSION = "1.0"


class ContributionType(str, Enum):
    """What kind of contribution the paper makes (multi-label)."""

    method = "method"
    model = "model"
    benchmark = "benchmark"
    dataset = "dataset"
    system = "system"
    theory = "theory"
    analysis = "analysis"


class ResearchArea(str, Enum):
    """Fixed taxonomy of research areas for this corpus (single label; see GUIDELINES.md for ties)."""

    reasoning = "reasoning"
    rl_post_training = "rl_post_training"
    alignment_safety = "alignment_safety"
    inference_efficiency = "inference_efficiency"
    architecture_pretraining = "architecture_pretraining"
    agents_tool_use = "agents_tool_use"
    code_software_engineering = "code_software_engineering"
    interpretability = "interpretability"
    diffusion_lms = "diffusion_lms"
    retrieval_long_context_knowledge = "retrieval_long_context_knowledge"
    evaluation_benchmarks = "evaluation_benchmarks"
    other = "other"


class Unit(str, Enum):
    """Unit of a reported number."""

    percent = "percent"
    percentage_points = "percentage_points"
    times = "times"
    points = "points"
    seconds = "seconds"
    count = "count"
    other = "other"


class ResultKind(str, Enum):
    """Whether a number is a score, a gain or a cut."""

    absolute = "absolute"
    improvement = "improvement"
    reduction = "reduction"


class Qualifier(str, Enum):
    """How the abstract hedges a number."""

    exact = "exact"
    up_to = "up_to"
    over = "over"
    under = "under"
    average = "average"
    about = "about"


# Models write placeholders where they mean "nothing": read as null in a scalar field, dropped from a list.
PLACEHOLDERS = frozenset(
    {
        "",
        "-",
        "--",
        "\u2013",
        "\u2014",
        "n/a",
        "n.a.",
        "null",
        "none",
        "nil",
        "unknown",
        "unspecified",
        "not applicable",
        "not available",
        "not specified",
        "not mentioned",
        "not stated",
        "not reported",
        "not given",
    }
)
# Signs the field descriptions name (and their common spellings), read as the enum value they stand for.
_SIGNS: dict[type[Enum], dict[str, str]] = {
    Unit: {
        "%": "percent",
        "percentage": "percent",
        "pct": "percent",
        "x": "times",
        "\u00d7": "times",
        "fold": "times",
        "-fold": "times",
        "pp": "percentage_points",
        "p.p.": "percentage_points",
        "percentage point": "percentage_points",
        "% points": "percentage_points",
        "%-points": "percentage_points",
        "point": "points",
        "pts": "points",
        "pt": "points",
        "s": "seconds",
        "sec": "seconds",
        "secs": "seconds",
        "second": "seconds",
    },
    Qualifier: {
        "~": "about",
        "\u2248": "about",
        "approximately": "about",
        "approx.": "about",
        "around": "about",
        "roughly": "about",
        ">": "over",
        "more than": "over",
        "<": "under",
        "less than": "under",
        "on average": "average",
        "=": "exact",
    },
    ResultKind: {"gain": "improvement", "increase": "improvement", "cut": "reduction", "decrease": "reduction"},
}
# Line breaks and other control characters never belong in a name: a run of them (with the spaces
# around it) becomes one space. No abstract in the corpus contains one.
_CONTROL_RUN = re.compile(r"\s*[\x00-\x1f\x7f-\x9f\u2028\u2029][\s\x00-\x1f\x7f-\x9f\u2028\u2029]*")
_MINUS = str.maketrans({"\u2212": "-", "\u2012": "-", "\ufe63": "-", "\uff0d": "-"})
# A unit sign written after the number ("56.61%", "1.37x", "3 pp", "12 s", LaTeX "56.61\%" and "16\times"
# as the abstracts write them); any other suffix is refused.
_UNIT_SUFFIX = re.compile(
    r"\s*(?:\\?%|percent|\u00d7|\\times|x|-?fold|pp|p\.p\.|percentage points?|points?|pts|s|secs?|seconds?)$",
    re.IGNORECASE,
)
# The unit a sign written with the number stands for, and the units that sign allows ("3.1%" of a
# percentage can be percentage points; "12 points" is a score's points).
_SIGN_UNITS = tuple(
    (re.compile(r"\d\s*(?:" + sign + r")$", re.IGNORECASE), implied, allowed)
    for sign, implied, allowed in (
        (r"pp|p\.p\.|percentage points?|%\s*points?|%-points?", "percentage_points", {"percentage_points"}),
        (r"\\?%|percent", "percent", {"percent", "percentage_points"}),
        (r"\u00d7|\\times|x|-?fold", "times", {"times"}),
        (r"points?|pts", "points", {"points", "percentage_points"}),
        (r"s|secs?|seconds?", "seconds", {"seconds"}),
    )
)
_GROUPED = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?")
_RANGE = re.compile(r"(?:from\s+)?(.+?)\s*(?:-|\u2013|\u2014|\bto\b)\s*(.+)", re.IGNORECASE)
_BETWEEN = re.compile(r"between\s+(.+?)\s+and\s+(.+)", re.IGNORECASE)  # "between 28% and 33%"
# A value with its uncertainty ("56.6 ± 0.3", "56.6 +/- 0.3%", "56.6 (±0.3)", "56.6 \pm 0.3"): the value and
# any unit sign after the uncertainty are kept; the schema has no field for the uncertainty.
_UNCERTAINTY = re.compile(
    r"(?P<value>.*?\d)\s*\(?\s*(?:\u00b1|\+/-|\+-|\\pm)\s*[\d.]+\s*(?P<sign>\\?%)?\s*\)?\s*(?P<unit>.*)",
    re.IGNORECASE,
)
# Notation glue, so float() or quantiphy can read the rest: a power of ten written as "x 10^3", "\times 10^{3}",
# "\cdot 10^{-2}", "·10³" or alone ("10^4") becomes an exponent ("e3"); LaTeX braces, "\," thin spaces and
# "\!" go; the scale words "thousand", "million", "billion" and "B"/"bn" (billion, as ML papers write
# model and token counts) become SI scale factors. Everything else is the parsers' own reading.
_SUPERSCRIPTS = str.maketrans(
    "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b\u207a", "0123456789-+"
)
_POWER = re.compile(
    r"^(?:(?P<mantissa>[+-]?[\d.]+)\s*(?:\u00d7|\\times|\\cdot|\u00b7|\*|x|X)\s*)?10\s*(?:\^|\*\*)\s*\(?(?P<exp>[+-]?\d+)\)?$"
)
_POWER_SUPERSCRIPT = re.compile(r"10(?P<exp>[\u207b\u207a]?[\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+)$")
_SCALE_WORDS = (
    (re.compile(r"\s*(?:thousand)$", re.IGNORECASE), "k"),
    (re.compile(r"\s*(?:million|mn)$", re.IGNORECASE), "M"),
    (re.compile(r"\s*(?:billion|bn|B)$"), "G"),
    (re.compile(r"\s*(?:trillion)$", re.IGNORECASE), "T"),
)


def _scaled_number_class() -> Any:
    from quantiphy import Quantity

    class ScaledNumber(Quantity):
        """A number with an SI scale factor ("1.2k", "3M"): only k, K, M, G, T are read, so "12m" is not 12 milli."""

    ScaledNumber.set_prefs(input_sf="kKMGT")
    return ScaledNumber


_SCALED: list[Any] = []  # quantiphy is imported on the first number written with a scale factor


def _glue(text: str) -> str:
    """``text`` with the notation glue above applied (a power of ten as an exponent, scale words as SI factors)."""
    s = re.sub(r"\\[,!;: ]", "", text).replace("{", "").replace("}", "").strip()
    s = _POWER_SUPERSCRIPT.sub(lambda m: "10^" + m.group("exp").translate(_SUPERSCRIPTS), s)
    power = _POWER.match(s)
    if power:
        return f"{power.group('mantissa') or '1'}e{power.group('exp')}"
    for word, factor in _SCALE_WORDS:
        if re.search(r"\d", s) and word.search(s):
            return word.sub(factor, s, count=1)
    return s


def parse_number(text: str) -> float:
    """The number a model wrote as a string, as a finite float.

    Python's ``float`` reads it (so ``"1e-4"``, ``"3.2e5"`` and ``"5_000"``, a Python digit
    separator, are numbers) after these normalizations: a Unicode minus (U+2212 and its look-alikes)
    becomes ``-`` and LaTeX math delimiters ``$`` are dropped; one unit sign the schema describes may
    follow the number (``%``, ``percent``, ``x``, ``×``, ``fold``, ``pp``, ``points``, ``s``, LaTeX ``\\%`` and
    ``\\times``); commas are allowed only as thousands separators (``"35,368"``, not ``"1,5"``); a power of
    ten in scientific notation (``"2.5×10^3"``, ``"2.5 \\times 10^{3}"``, ``"10^4"``, ``"3·10⁻²"``) is read as
    an exponent. A number with a scale factor (``"1.2k"``, ``"35K"``, ``"3M"``, ``"1.5B"`` for billion,
    ``"2 million"``) is read by quantiphy (SI factors k, K, M, G, T only).
    Raises ValueError, quoting the text, for anything else (``"~5"``, ``"12.5 or 13"``, ``"12m"``,
    ``"nan"``, ``"inf"``): a prefix is never kept.
    """
    s = _UNIT_SUFFIX.sub("", text.strip().translate(_MINUS).replace("$", "").strip(), count=1)
    s = _glue(s)
    if "," in s:
        if not _GROUPED.fullmatch(s):
            raise ValueError(f"'{text}' is not a number (a comma that is not a thousands separator)")
        s = s.replace(",", "")
    try:
        number = float(s)
    except ValueError:
        number = _scaled(s, text)
    if not math.isfinite(number):
        raise ValueError(f"'{text}' is not a finite number")
    return number


def _scaled(s: str, text: str) -> float:
    """``s`` read as a number with an SI scale factor and no unit, else ValueError quoting ``text``."""
    if not re.search(r"\d\s?[kKMGT]$", s):  # quantiphy reads more ("5__000"); only a scale factor is asked of it
        raise ValueError(f"'{text}' is not a number")
    if not _SCALED:
        _SCALED.append(_scaled_number_class())
    try:
        quantity = _SCALED[0](s)
    except Exception:  # quantiphy's own InvalidNumber and friends
        raise ValueError(f"'{text}' is not a number") from None
    if quantity.units:
        raise ValueError(f"'{text}' is not a number")
    return float(quantity)


def _note(info: ValidationInfo, repair: str) -> None:
    """Record a tolerated deviation in ``context["repairs"]`` (a list, kept free of duplicates) when the
    caller passed one (:func:`paperfields.extract.backends.base.parse_reply` does)."""
    repairs = info.context.get("repairs") if isinstance(info.context, dict) else None
    if isinstance(repairs, list) and repair not in repairs:
        repairs.append(repair)


def _is_placeholder(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() in PLACEHOLDERS


def _clean(value: Any, info: ValidationInfo) -> Any:
    if isinstance(value, str) and _CONTROL_RUN.search(value):
        _note(info, "control_chars")
        return _CONTROL_RUN.sub(" ", value).strip()
    return value


def _text(value: Any, info: ValidationInfo) -> Any:
    return _clean(value, info)


def _optional_text(value: Any, info: ValidationInfo) -> Any:
    value = _clean(value, info)
    if _is_placeholder(value):
        _note(info, "placeholders")
        return None
    return value


def _reading_reply(info: ValidationInfo) -> bool:
    """True when a model's reply is being read (the caller collects repairs in ``context["repairs"]``, as
    :func:`~paperfields.extract.backends.base.parse_reply` does); a stored record (a prediction line, gold)
    is read strictly."""
    return isinstance(info.context, dict) and isinstance(info.context.get("repairs"), list)


def _list_from_text(value: str, info: ValidationInfo) -> Any:
    """A list a model wrote as a string (vLLM and several SDKs send these), read as a list: a JSON array
    encoded a second time (``"[\\"GSM8K\\", \\"MATH\\"]"``) is decoded; other text is split at commas and
    semicolons (``"GSM8K, MATH"``: no gold list item holds either), a single name becomes a one-item list.
    Noted as ``list_text``. Text that opens a JSON array but does not decode to one is left for the
    schema to refuse."""
    text = value.strip()
    if text.startswith("["):
        try:
            decoded = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            return value
        if not isinstance(decoded, list):
            return value
        _note(info, "list_text")
        return decoded
    _note(info, "list_text")
    return [part.strip() for part in re.split(r"[,;]", text)]


def _items(value: Any, info: ValidationInfo) -> Any:
    """A list with null and placeholder items dropped; null or a placeholder instead of the list is [];
    in a model's reply, a list written as a string is read by :func:`_list_from_text`."""
    if value is None or _is_placeholder(value):
        _note(info, "placeholders")
        return []
    if isinstance(value, str) and _reading_reply(info):
        value = _list_from_text(value, info)
    if not isinstance(value, list):
        return value
    kept = [v for v in (_clean(v, info) for v in value) if v is not None and not _is_placeholder(v)]
    if len(kept) != len(value):
        _note(info, "placeholders")
    return kept


def reply_items(model: type[BaseModel], repair: str) -> BeforeValidator:
    """Validator of a list of ``model`` items: :func:`_items` (null, placeholders, a list written as a
    string), and, in a model's reply, an item that does not validate as ``model`` is left out and noted
    as ``repair``, so one bad item costs that item and not the whole record. A stored record is read
    strictly (the item then fails the record)."""

    def validate(value: Any, info: ValidationInfo) -> Any:
        value = _items(value, info)
        if not isinstance(value, list) or not _reading_reply(info):
            return value
        kept = []
        for item in value:
            try:
                kept.append(model.model_validate(item, context=info.context))
            except ValidationError:
                _note(info, repair)
        return kept

    return BeforeValidator(validate)


def _enum_match(enum: type[Enum], value: Any) -> tuple[Any, Optional[str]]:
    """(``value`` as a value of ``enum``, the repair that reading took or None): exact, else a sign the
    description names ("%", "x", "~"; ``unit_sign``), else matched ignoring case and with runs of
    spaces, hyphens and other punctuation read as ``_`` (``enum_spelling``); unmatched, ``value`` itself."""
    if not isinstance(value, str) or value in enum._value2member_map_:
        return value, None
    sign = _SIGNS.get(enum, {}).get(value.strip().lower())
    if sign is not None:
        return sign, "unit_sign"
    key = re.sub(r"[^0-9a-z]+", "_", value.strip().lower()).strip("_")
    if key in enum._value2member_map_:
        return key, "enum_spelling"
    return value, None


def _enum_value(enum: type[Enum], value: Any, info: ValidationInfo) -> Any:
    """:func:`_enum_match`, its repair noted."""
    value, repair = _enum_match(enum, value)
    if repair is not None:
        _note(info, repair)
    return value


def _enum(enum: type[Enum], default: Any = None) -> BeforeValidator:
    """Validator of a single enum field; null or a placeholder gives ``default`` (the field's own
    default, as if the key were absent) when the field has one."""

    def validate(value: Any, info: ValidationInfo) -> Any:
        if default is not None and (value is None or _is_placeholder(value)):
            _note(info, "placeholders")
            return default
        return _enum_value(enum, value, info)

    return BeforeValidator(validate)


def _enum_items(enum: type[Enum]) -> BeforeValidator:
    def validate(value: Any, info: ValidationInfo) -> Any:
        value = _items(value, info)
        return [_enum_value(enum, v, info) for v in value] if isinstance(value, list) else value

    return BeforeValidator(validate)


def _number(value: Any, info: ValidationInfo) -> Any:
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()} is not a number")
    if isinstance(value, int):
        try:
            float(value)
        except OverflowError:
            raise ValueError("the number is too large") from None
        return value
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value} is not a finite number")
    if isinstance(value, str):
        number = parse_number(value)
        _note(info, "number_text")
        return number
    return value


def _bool(value: Any, info: ValidationInfo) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if _is_placeholder(value):
        _note(info, "placeholders")
        return None
    word = value.strip().lower() if isinstance(value, str) else value
    if word in ("true", "yes", 1):
        _note(info, "bool_text")
        return True
    if word in ("false", "no", 0):
        _note(info, "bool_text")
        return False
    raise ValueError(f"{value!r} is not true, false or null")


Text = Annotated[str, BeforeValidator(_text)]
OptionalText = Annotated[Optional[str], BeforeValidator(_optional_text)]
TextList = Annotated[list[str], BeforeValidator(_items)]


def _optional_number(value: Any, info: ValidationInfo) -> Any:
    if _is_placeholder(value):
        _note(info, "placeholders")
        return None
    return _number(value, info)


Number = Annotated[float, BeforeValidator(_number)]
OptionalNumber = Annotated[Optional[float], BeforeValidator(_optional_number)]


def _unit_from_sign(data: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
    """``data`` (a result before validation) with ``unit`` set from the sign written with its value
    when the two disagree ("56.61%" with unit times becomes percent; the abstract's sign is what the
    unit's description is read from), noted as ``unit_conflict``. A unit the sign allows, a value
    without a sign, and a unit that is no known spelling are left alone."""
    value, unit = data.get("value"), data.get("unit")
    if not isinstance(value, str) or not isinstance(unit, str):
        return data
    text = value.strip().replace("$", "")
    given, _ = _enum_match(Unit, unit)  # its repair is noted when the unit field itself is read
    if given not in Unit._value2member_map_:
        return data
    for sign, implied, allowed in _SIGN_UNITS:
        if sign.search(text):
            if given in allowed:
                return data
            _note(info, "unit_conflict")
            return {**data, "unit": implied}
    return data


class Result(BaseModel):
    """One quantitative claim of the abstract, as a tuple."""

    model_config = ConfigDict(extra="ignore", use_enum_values=True)

    metric: Text = Field(description="What the number measures, as written in the abstract.")
    value: Number = Field(
        allow_inf_nan=False,
        description="The number as written in the abstract, without its unit (56.61 for "
        "'56.61%', 3 for '3x'); for a range, the lower end.",
    )
    value_upper: OptionalNumber = Field(
        default=None, allow_inf_nan=False, description="Upper end of a range ('58-63%' gives 63), else null."
    )
    unit: Annotated[Unit, _enum(Unit)] = Field(
        description="percent for '%', percentage_points for 'points'/'pp' of a percentage, times for 'x'/'fold', "
        "points for other score points, seconds, count for plain counts, other."
    )
    kind: Annotated[ResultKind, _enum(ResultKind)] = Field(
        description="absolute for a score or amount, improvement for a gain over something, "
        "reduction for a cut (cost, latency, error, tokens)."
    )
    qualifier: Annotated[Qualifier, _enum(Qualifier, "exact")] = Field(
        default="exact",
        description="exact, up_to ('up to'), over ('over', 'more than'), under ('less "
        "than'), average ('on average'), about ('about', '~').",
    )
    dataset: OptionalText = Field(
        default=None, description="Named dataset or benchmark the number is on, as written, else null."
    )
    model: OptionalText = Field(default=None, description="Named model the number is for, as written, else null.")
    baseline: OptionalText = Field(
        default=None, description="Named method the number is compared against, as written, else null."
    )

    @model_validator(mode="before")
    @classmethod
    def _range_and_extra_keys(cls, data: Any, info: ValidationInfo) -> Any:
        """A range written as the value ("58-63%", "12.5 to 13", "from 28% to 33%", "between 28% and 33%")
        becomes value and value_upper when both ends are numbers in order and value_upper is not given; a
        value with its uncertainty ("56.6 ± 0.3") keeps the value (``uncertainty``: the schema has no field
        for the spread); keys not in the schema are noted."""
        if not isinstance(data, dict):
            return data
        if set(data) - set(cls.model_fields):
            _note(info, "extra_keys")
        data = _unit_from_sign(data, info)
        value = data.get("value")
        if isinstance(value, str) and (spread := _UNCERTAINTY.fullmatch(value.strip())):
            _note(info, "uncertainty")
            value = spread.group("value") + (spread.group("unit") or spread.group("sign") or "")
            data = {**data, "value": value}
        if isinstance(value, str) and data.get("value_upper") is None:
            try:
                parse_number(value)
            except ValueError:
                ends = _BETWEEN.fullmatch(value.strip()) or _RANGE.fullmatch(value.strip())
                try:
                    low, high = (parse_number(ends.group(1)), parse_number(ends.group(2))) if ends else (None, None)
                except ValueError:
                    low = high = None
                if low is not None and high is not None and low <= high:
                    _note(info, "number_text")
                    data = {**data, "value": low, "value_upper": high}
        return data


class PaperRecord(BaseModel):
    """The structured record of one abstract (schema v1)."""

    model_config = ConfigDict(extra="ignore", use_enum_values=True)

    method_name: Annotated[
        OptionalText,
        FieldFacts(
            match="exact",
            short="name",
            grounded="text",
            levels=(Level("soft", match="soft_name", short="name (soft)", board="table"),),
        ),
    ] = Field(
        default=None,
        description="Name the paper gives its main contribution (a coined name or acronym), "
        "as written; null when the contribution is unnamed.",
    )
    method_full_name: Annotated[
        OptionalText,
        FieldFacts(
            match="exact",
            short="full name",
            grounded="text",
            levels=(Level("soft", match="phrase", short="full name (soft)"),),
        ),
    ] = Field(default=None, description="Spelled-out form of method_name when the abstract gives one, else null.")
    contribution_types: Annotated[
        list[ContributionType], _enum_items(ContributionType), FieldFacts(match="label_set", short="contrib")
    ] = Field(
        default_factory=list,
        description="The kinds of contribution the abstract claims (usually one or two): method, "
        "model, benchmark, dataset, system, theory, analysis.",
    )
    research_area: Annotated[
        ResearchArea, _enum(ResearchArea, "other"), FieldFacts(match="label", short="area (acc)", metric="accuracy")
    ] = Field(default="other", description="Exactly one area from the fixed list.")
    tasks: Annotated[TextList, FieldFacts(match="task", short="tasks", grounded="text")] = Field(
        default_factory=list,
        description="Tasks the paper addresses or evaluates on, as short noun phrases written in the abstract.",
    )
    datasets: Annotated[TextList, FieldFacts(match="dataset", short="datasets", grounded="text")] = Field(
        default_factory=list,
        description="Named datasets and benchmarks written in the abstract; not descriptions like 'math benchmarks'.",
    )
    models: Annotated[TextList, FieldFacts(match="model", short="models", grounded="text")] = Field(
        default_factory=list,
        description="Specific named models the abstract uses or evaluates, as written; not generic kinds like 'LLMs'.",
    )
    metrics: Annotated[TextList, FieldFacts(match="metric", short="metrics", grounded="text")] = Field(
        default_factory=list, description="Evaluation metrics the abstract names, as written."
    )
    baselines: Annotated[TextList, FieldFacts(match="baseline", short="baselines", grounded="text")] = Field(
        default_factory=list, description="Named methods or models the abstract says it compares against, as written."
    )
    # in a reply, a result item that does not validate (a value no parser reads, a unit outside the schema) is left out
    results: Annotated[
        list[Result],
        reply_items(Result, "result_dropped"),
        FieldFacts(
            match="results_claim",
            short="results",
            grounded="number",
            levels=(
                Level("value", match="results_value", short="results: value", board="column"),
                Level("full", match="results_full", short="results: full", board="column"),
            ),
        ),
    ] = Field(default_factory=list, description="Quantitative claims, one entry per number stated.")
    code_url: Annotated[OptionalText, FieldFacts(match="url", short="url", grounded="url")] = Field(
        default=None, description="First-party code or project URL given in the abstract, else null."
    )
    training_free: Annotated[
        Optional[bool], BeforeValidator(_bool), FieldFacts(match="label", short="train-free (acc)", metric="accuracy")
    ] = Field(
        default=None,
        description="true if the abstract says the method needs no training, false if it "
        "trains or fine-tunes a model, null when not applicable.",
    )


FIELDS = tuple(PaperRecord.model_fields)
# Derived from the fields' facts and types (paperfields.core.fields): lists of strings found in the
# abstract as text, and names (nullable strings found as text).
LIST_FIELDS = tuple(f.name for f in record_fields(PaperRecord) if f.is_list and f.item is str)
STRING_FIELDS = tuple(
    f.name for f in record_fields(PaperRecord) if not f.is_list and f.item is str and f.facts.grounded == "text"
)


def all_required(schema: dict[str, Any], strict: bool = False) -> dict[str, Any]:
    """Copy of a JSON schema with every object property required (recursively, through $defs).

    Grammar-constrained decoding skips optional properties; small models then drop fields.
    Nullable fields stay nullable, so "required" only forces the key to be written.

    ``strict=True`` makes the schema OpenAI structured outputs accept with ``"strict": true`` (the
    openai SDK's own conversion, and one rule more): ``additionalProperties: false`` on every object,
    a ``$ref`` with sibling keywords (``description``, ``default``) inlined from its definition, and
    every ``default`` keyword dropped, null or not (OpenAI answers "'default' is not permitted"; with
    every property required a default can never apply). Property names are never touched, so a
    field called ``default`` stays.
    """
    return _required(schema, schema if strict else None)


# Keywords whose value maps names to schemas (recursed into, never read as a schema themselves),
# and keywords whose value is instance data (left as is).
_NAME_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_DATA = ("enum", "const", "examples", "default")


def _required(node: Any, root: Optional[dict[str, Any]]) -> Any:
    if isinstance(node, dict):
        if root is not None and isinstance(node.get("$ref"), str) and len(node) > 1:
            target: Any = root
            for part in node["$ref"].removeprefix("#/").split("/"):
                target = target[part]
            node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}  # the sibling keywords win
        out = {}
        for key, value in node.items():
            if key in _NAME_MAPS and isinstance(value, dict):
                out[key] = {name: _required(sub, root) for name, sub in value.items()}
            else:
                out[key] = value if key in _DATA else _required(value, root)
        if out.get("type") == "object" and "properties" in out:
            out["required"] = list(out["properties"])
        if root is not None:
            if out.get("type") == "object":
                out.setdefault("additionalProperties", False)
            out.pop("default", None)
        return out
    if isinstance(node, list):
        return [_required(v, root) for v in node]
    return node
