"""The digest's words, one gettext catalogue per language (`digest/catalogues/<lang>.po`, read with Babel).

Messages are named by key (`heading.plan_changes`), not by their English text: English is a
catalogue like Chinese, no sentence lives in a template or in code, and a test checks that both
catalogues hold the same keys and every key the code and templates use. Values are `{name}`
fields (`str.format`); plural messages (`tn`) follow the language's Plural-Forms (Chinese has one
form). A key missing from the catalogue raises KeyError: a mail never shows a bare key.

Why gettext .po through Babel rather than a dict per language: it is the format translators'
tools (Poedit, Weblate, `pybabel update`) read and write, and it carries plural rules.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations

CATALOGUE_DIR = Path(__file__).with_name("catalogues")
# The languages GPUPLAN_DIGEST_LANG takes: English, and Chinese for the readers of AutoDL, 恒源云 and 矩池云
LANGUAGES = ("en", "zh")
DEFAULT_LANGUAGE = "en"
# The currency each language reads first: CNY for Chinese (what AutoDL, 恒源云 and 矩池云 quote in).
PRIMARY_CURRENCY = {"en": "USD", "zh": "CNY"}


class UnknownLanguage(ValueError):
    """A digest language we have no catalogue for."""


def read_catalogue(lang: str) -> Catalog:
    """The Babel catalogue of `lang` as it is on disk (for the consistency tests, and `catalogue`)."""
    with (CATALOGUE_DIR / f"{lang}.po").open("rb") as po:
        return read_po(po, locale=lang)


@dataclass(frozen=True)
class Words:
    """The digest's messages in one language."""

    lang: str
    _translations: Translations = field(repr=False)
    _keys: frozenset[str] = field(repr=False)

    def t(self, key: str, **values: object) -> str:
        """The message `key`, its `{name}` fields filled from `values`."""
        self._known(key)
        return self._translations.gettext(key).format_map(values)

    def tn(self, key: str, n: int, **values: object) -> str:
        """The plural message `key` for the count `n` (also given to the message as `{n}`)."""
        self._known(key)
        return self._translations.ngettext(key, key, n).format_map({"n": n, **values})

    def has(self, key: str) -> bool:
        return key in self._keys

    def _known(self, key: str) -> None:
        if key not in self._keys:
            raise KeyError(f"no message {key!r} in the {self.lang} digest catalogue ({CATALOGUE_DIR})")


@cache
def words(lang: str) -> Words:
    """The messages of `lang` ('en' | 'zh'); raises UnknownLanguage for any other."""
    if lang not in LANGUAGES:
        raise UnknownLanguage(f"{lang!r}: GPUPLAN_DIGEST_LANG takes {' or '.join(LANGUAGES)}")
    catalog = read_catalogue(lang)
    # Babel reads .po; gettext's Translations read the compiled form, built here in memory so no
    # generated .mo file is kept beside its source.
    compiled = io.BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    keys = frozenset(
        message.id if isinstance(message.id, str) else message.id[0] for message in catalog if message.id
    )
    return Words(lang, Translations(compiled), keys)
