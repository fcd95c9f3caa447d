"""Characters that make one name read as another: letters and digits drawn like other letters (:data:`LOOKALIKES`,
folded by :func:`fold_lookalikes`) and characters that draw nothing yet move or join what is around them
(:data:`INVISIBLE`: bidirectional controls and zero-width characters, found by :func:`invisible`).

:data:`LOOKALIKES` is the one table of look-alikes the submission door folds with: the skeleton a name is compared
with the references' names by (:func:`~paperfields.scoring.submissions.skeleton`) and the reference words a name may
not spell (:func:`~paperfields.scoring.submissions.reference_word`) both read it, so a character folded in one is
folded in the other.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Optional

# What a letter or digit passes for once case-folded (NFKC has already made full-width forms plain): 0 for o; 1, i
# | and ! for l; 5 and $ for s; 3 for e; 4 and @ for a; and the Cyrillic and Greek letters drawn like Latin ones.
# Keys are single case-folded characters, values Latin letters a-z.
LOOKALIKES: dict[str, str] = {
    **dict.fromkeys("0οоσ", "o"),
    **dict.fromkeys("1i|ιіӏ!", "l"),
    **dict.fromkeys("5$ѕ", "s"),
    **dict.fromkeys("3εе", "e"),
    **dict.fromkeys("4@αа", "a"),
    **dict.fromkeys("ρр", "p"),
    **dict.fromkeys("с", "c"),
    **dict.fromkeys("уγ", "y"),
    **dict.fromkeys("хχ", "x"),
    **dict.fromkeys("νѵ", "v"),
    **dict.fromkeys("τт", "t"),
    **dict.fromkeys("κк", "k"),
    **dict.fromkeys("υ", "u"),
    **dict.fromkeys("ոп", "n"),
    **dict.fromkeys("ɡ", "g"),
    **dict.fromkeys("һ", "h"),
    **dict.fromkeys("ԁ", "d"),
    **dict.fromkeys("ј", "j"),
    **dict.fromkeys("м", "m"),
}
FOLD = str.maketrans(LOOKALIKES)  # for case-folded text (str.translate)


def fold_lookalikes(text: str) -> str:
    """``text`` with each character that passes for a Latin letter (:data:`LOOKALIKES`, looked up case-folded, so a
    capital ``I`` or a Cyrillic capital ``А`` too) written as that letter in lower case, and every other character as
    written (its case kept, so camelCase humps still split words): ``ru1es``, ``ruIes`` -> ``rules``; ``hum4n`` ->
    ``human``; ``g0ld`` -> ``gold``."""
    return "".join(LOOKALIKES.get(c.casefold(), c) for c in text)


# Bidirectional controls (the embeddings, overrides and isolates, the marks LRM, RLM and ALM) and zero-width
# characters (space, non-joiner, joiner, word joiner, and U+FEFF, the zero-width no-break space a BOM is): drawn as
# nothing, they reorder or hide what a name shows (``acme\u202eyfed`` is drawn as ``acmedefy``).
INVISIBLE = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")


def invisible(text: str) -> Optional[tuple[int, str]]:
    """The first invisible character of ``text`` (:data:`INVISIBLE`) as (its 1-based position, its code point and
    name: ``U+202E (right-to-left override)``), or None when there is none."""
    found = INVISIBLE.search(text)
    if found is None:
        return None
    char = found.group(0)
    return found.start() + 1, f"U+{ord(char):04X} ({unicodedata.name(char).lower()})"
