"""The language of a question, so answers come back in it (Korean, Japanese, English), and of
a document's text (its card)."""

from __future__ import annotations

import re

LANGUAGE_NAMES = {"ko": "Korean", "ja": "Japanese", "en": "English"}


def detect_language(text: str) -> str:
    """'ko', 'ja' or 'en', by script: Hangul -> Korean; kana -> Japanese; Han ideographs
    alone -> Japanese (of the supported languages, the one written with them); else English."""
    hangul = kana = han = 0
    for ch in text:
        code = ord(ch)
        if 0xAC00 <= code <= 0xD7AF or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F:
            hangul += 1
        elif 0x3040 <= code <= 0x30FF or 0x31F0 <= code <= 0x31FF or 0xFF66 <= code <= 0xFF9F:
            kana += 1
        elif 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF:
            han += 1
    if hangul and hangul >= kana:
        return "ko"
    if kana or han:
        return "ja"
    return "en"


# The commonest function words of the Latin-script languages a document is told apart in:
# a page of running text holds dozens of them, whatever its subject.
_FUNCTION_WORDS = {
    "en": frozenset("the of and to in is that for with as on by are this be from or which".split()),
    "de": frozenset("der die und das ist nicht mit den von zu sich auf für dem ein eine des".split()),
    "fr": frozenset("le la les et des est une dans pour que qui pas sur du au avec aux".split()),
    "es": frozenset("el la los las y que es del en por una para con se al como".split()),
    "it": frozenset("il la di che è e per una non sono gli della del nel con le".split()),
    "pt": frozenset("o a os as e que do da em um uma para com não dos das é".split()),
    "nl": frozenset("de het een en van is dat op te in voor met zijn niet ook".split()),
}
# Fewer function words than this and the text (a table, a title page) does not tell.
_MIN_FUNCTION_WORDS = 8
_WORD = re.compile(r"[^\W\d_]+")


def document_language(text: str) -> str:
    """ISO 639-1 code of a document's text, '' when it does not tell: Korean and Japanese by
    script (as detect_language), a Latin-script language by its function words when one
    clearly leads (twice the next), else ''."""
    cjk = detect_language(text)
    if cjk != "en":
        return cjk
    counts = dict.fromkeys(_FUNCTION_WORDS, 0)
    for word in _WORD.findall(text.lower()):
        for code, words in _FUNCTION_WORDS.items():
            if word in words:
                counts[code] += 1
    ranked = sorted(counts.items(), key=lambda item: item[1], reverse=True)
    (best, most), (_, second) = ranked[0], ranked[1]
    return best if most >= _MIN_FUNCTION_WORDS and most >= 2 * second else ""
