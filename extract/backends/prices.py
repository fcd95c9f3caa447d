"""Dollar cost of token usage, from the price table ``prices.toml`` (USD per million tokens)."""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Optional

import tomllib
from pydantic import BaseModel

from paperfields.core.paths import table
from paperfields.core.runlog import Usage


class Price(BaseModel):
    """USD per million input and output tokens, and when the figure was read."""

    input: float
    output: float
    read_on: str
    note: str = ""


@lru_cache(maxsize=1)
def load_prices(path: Path = table("prices.toml")) -> tuple[dict[str, Price], dict[str, Price]]:
    """(per-provider defaults, per-model prices) from the price table."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    defaults = {k: Price.model_validate(v) for k, v in data.get("defaults", {}).items()}
    models = {k: Price.model_validate(v) for k, v in data.get("models", {}).items()}
    return defaults, models


def price_for(backend: str) -> Optional[Price]:
    """The price of ``provider/model``: the model's entry, else its provider's default, else None
    (unknown: dollars are then reported as unknown, never as zero)."""
    defaults, models = load_prices()
    return models.get(backend) or defaults.get(backend.partition("/")[0])


def parse_price(text: str) -> Price:
    """A price given on the command line, ``"IN,OUT"``: USD per million input and output tokens
    (``"0.2,0.8"``), each read by ``float``. Raises ValueError naming what is wrong: not two numbers,
    a number that is negative, NaN or infinite."""
    parts = [part.strip() for part in text.split(",")]
    if len(parts) != 2:
        raise ValueError(
            f"--price {text!r}: give two numbers IN,OUT (USD per million input and output tokens), e.g. 0.2,0.8"
        )
    values = []
    for part, what in zip(parts, ("input", "output")):
        try:
            value = float(part)
        except ValueError:
            raise ValueError(f"--price {text!r}: the {what} price {part!r} is not a number") from None
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"--price {text!r}: the {what} price must be a finite number >= 0 (got {part})")
        values.append(value)
    return Price(
        input=values[0],
        output=values[1],
        read_on="given with --price",
        note="USD per million tokens, given by the user",
    )


def dollars(usage: Usage, price: Optional[Price]) -> Optional[float]:
    """Cost in USD of ``usage`` at ``price``; None when the price or a token count is unknown."""
    if price is None or not usage.known:
        return None
    return round((usage.input_tokens * price.input + usage.output_tokens * price.output) / 1e6, 6)
