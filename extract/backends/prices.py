"""Dollar cost of token usage, from the price table ``prices.toml`` (USD per million tokens)."""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Optional

from pydantic import BaseModel

from paperfields.extract.backends.base import Usage


class Price(BaseModel):
    """USD per million input and output tokens, and when the figure was read."""

    input: float
    output: float
    read_on: str
    note: str = ""


@lru_cache(maxsize=1)
def load_prices(path: Path = Path(__file__).with_name("prices.toml")) -> tuple[dict[str, Price], dict[str, Price]]:
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


def dollars(usage: Usage, price: Optional[Price]) -> Optional[float]:
    """Cost in USD of ``usage`` at ``price``; None when the price is unknown."""
    if price is None:
        return None
    return round((usage.input_tokens * price.input + usage.output_tokens * price.output) / 1e6, 6)
