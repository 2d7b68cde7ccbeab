"""Text to index terms, for stored turns and for queries (Korean and English in one chat).

One tokenizer, written here in Python, makes the terms of both sides, so the SQLite index
only stores space-separated terms and never has to agree with us on a tokenizer:

- Latin and other alphabetic words: NFKC, case-folded, accents removed, English stopwords
  dropped, irregular forms put in their base form (``ran`` -> ``run``, ``children`` -> ``child``:
  memory.recall.lexicon), the rest reduced by the Porter stemmer (``painting`` / ``painted`` ->
  ``paint``).
  Numbers are kept as they are (``4719``).
- Hangul (and kana / CJK ideographs): overlapping character bigrams of each run
  (``자물쇠는`` -> ``자물 물쇠 쇠는``), a single character for a one-character run. A two-syllable
  query (``번호``) then finds ``번호를`` and ``번호는``. Measured against the morphological
  analyzer kiwipiepy on Korean conversations (bench.recall_korean: particles, honorifics,
  spacing, units, mixed Korean-English): the same recall@5/10, one question in 84 better at @1,
  for a 105 MB model, seconds to load and ~25x the indexing time, so bigrams it is.

Queries go through the same steps, plus: question words and small talk are dropped, Korean
particles are stripped from a query word before its bigrams are made (``번호를`` -> ``번호``),
and a word of one syllable (or one syllable plus a particle) becomes a prefix term. Every term
is quoted when it is put into an FTS5 expression, so no user input is ever FTS5 syntax.

A reply stored with the message it answers quoted before it ("> Mom: How's the new flat?\n\nQuiet, with a
park": the bot stores a Telegram reply so, bot.tg.references, and so does the importer, memory.imports.formats)
is indexed as two parts (``split_quote``): its own terms, then ``QUOTE``, then the quote's. Its words are its own
(its score, its vector, whether it asks or tells of its speaker); the quote says which question it answers
(memory.recall.rank), as the message before an answer does.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from memory.recall.lexicon import base, pieces
from memory.recall.stem import stem

_CJK = "\uac00-\ud7a3\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
HANGUL_RUN = re.compile(r"[\uac00-\ud7a3]+")  # a run of Hangul syllables (a Korean word and its particles)
_TOKEN = re.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>[^\W_{_CJK}]+)")
_MAX_WORD = 40

# Removed from stored text and from queries: words that carry no topic.
DOC_STOPWORDS = frozenset(
    """
    a an the and or but if then than so as of at by for with about against between into through
    during before after above below to from up down in out on off over under again further once
    here there all any both each few more most other some such no nor not only own same too very
    s t d ll re ve m can will just don should now i me my myself we our ours ourselves you your
    yours yourself yourselves he him his himself she her hers herself it its itself they them their
    theirs themselves what which who whom this that these those am is are was were be been being
    have has had having do does did doing would could ought im youre hes shes its were theyre ive
    youve weve theyve id youd hed shed wed theyd ill youll hell shell well theyll isnt arent wasnt
    werent hasnt havent hadnt doesnt dont didnt wont wouldnt shant shouldnt cant cannot couldnt
    mustnt lets thats whos whats heres theres whens wheres whys hows also oh yeah yes ok okay hey
    hi hello wow lol haha hmm um uh
    """.split()
)

# Also removed from queries only: question words, requests and small talk; and the words of the tense ("still",
# "currently": memory.recall.query reads them as asking about now, as it reads "now", a stopword): "Does Jo still
# rely on public transport?" in a chat that never said "transport" ranked every "I still haven't done my taxes"
# first, by the one word of the question the chat said
QUERY_STOPWORDS = DOC_STOPWORDS | frozenset(
    """
    when where why how whose tell remember recall say said mention mentioned talk talked
    know think thing things something anything kind sort like please thanks thank sure really
    get got go went going make made let us one ever last time times
    likely probably possibly perhaps maybe recently lately usually typically often many much long
    still currently nowadays anymore
    """.split()
)

# Korean question words, requests and small talk, matched on the whole word or its stem.
KOREAN_STOPWORDS = frozenset(
    """
    뭐 뭐야 뭐지 뭐였지 뭐였더라 뭐더라 무엇 무슨 어떤 어떻게 언제 어디 누구 누가 왜 얼마 몇 어쩌다 어쩌다가 어째서
    그 이 저 그거 이거 저거 그것 이것 저것 그게 이게 거 것 나 너 내 네 우리 저희 제 당신
    안녕 안녕하세요 안녕하십니까 하이 헬로 고마워 고마워요 고맙습니다 감사 감사합니다 감사해요
    응 네네 예 아니 아니요 그래 그래요 좋아 좋아요 음 아 오 와 ㅋㅋ ㅋㅋㅋ ㅎㅎ ㅎㅎㅎ
    좀 다시 알려줘 알려줘요 알려주세요 말해줘 말해줘요 기억해 기억나 기억나니 기억해줘 했지 였지
    했어 했었지 있어 있지 있었지 해줘 해주세요 줘 주세요 그럼 그리고 근데 그런데 혹시 제발
    """.split()
)

# Particles (josa) stripped from the end of a Korean query word, longest first.
_PARTICLES = tuple(
    sorted(
        """
        에서부터 으로부터 에게서 한테서 이라고 이라는 이랑 에서 에게 한테 께서 까지 부터 보다 처럼
        만큼 으로 하고 이나 이며 이고 이다 이야 이에요 예요 입니다 였어 였지 이었어 은 는 이 가 을
        를 에 의 도 만 로 와 과 랑 나 야
        """.split(),
        key=len,
        reverse=True,
    )
)
_PARTICLE_SET = frozenset(_PARTICLES)
_ONE_SYLLABLE_PARTICLES = frozenset("은는이가을를에의도만로와과랑")


def _fold(word: str) -> str:
    """Lower case, accents removed (only for words that are not plain ASCII)."""
    word = word.casefold()
    if word.isascii():
        return word
    decomposed = unicodedata.normalize("NFD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else pieces(run)


@lru_cache(maxsize=100_000)
def _word_term(word: str) -> str | None:
    folded = _fold(word)
    if not folded or folded in DOC_STOPWORDS:
        return None
    if len(folded) > _MAX_WORD:
        folded = folded[:_MAX_WORD]
    return stem(base(folded))


def word_term(word: str) -> str | None:
    """The index term of one word (None for a stopword): what a lexicon word becomes in the index."""
    return _word_term(word)


QUOTE = ">"  # in a turn's terms: its own terms, then this, then those of the message it quotes (never a term)
_QUOTED = re.compile(r"((?:>[^\n]*\n)+)\n(?=\S)")  # "> " lines, an empty line, then the reply's own text


def split_quote(text: str) -> tuple[str, str]:
    """(the quote a reply starts with, the reply's own text): ``"> Mom: How's the flat?\n\nQuiet, with a park"``
    -> ``("> Mom: How's the flat?\n", "Quiet, with a park")``; ``("", text)`` for a text that quotes nothing."""
    if not text.startswith(">"):
        return "", text
    m = _QUOTED.match(text)
    return (m.group(1), text[m.end() :]) if m else ("", text)


def turn_terms(quote: str, own: str) -> tuple[str, int]:
    """A stored turn's terms as the index keeps them (space-separated; a reply's own, ``QUOTE``, the quote's) and
    how many are its own; ``quote``, ``own``: its text as ``split_quote`` parts it."""
    terms = doc_terms(own)
    quoted = doc_terms(quote) if quote else []
    return " ".join([*terms, QUOTE, *quoted] if quoted else terms), len(terms)


def own_terms(terms: str) -> str:
    """A turn's own terms of ``turn_terms``' string, without those of the message it quotes."""
    return terms.partition(QUOTE)[0].rstrip()


def plain_terms(text: str) -> set[str]:
    """The index terms ``text`` writes only in lower case: not those of a word with a capital first letter
    ("Luna", "Cedar Ridge", "Iceland"; "I" is a stopword), nor of a script without case (Hangul, digits)."""
    lower: set[str] = set()
    capital: set[str] = set()
    for m in _TOKEN.finditer(unicodedata.normalize("NFKC", text)):
        word = m.group("word")
        if word is None or (term := _word_term(word)) is None:
            continue
        if word[0].islower():
            lower.add(term)
        elif word[0].isupper():
            capital.add(term)
    return lower - capital


def doc_terms(text: str) -> list[str]:
    """The index terms of a stored message's text, in order (duplicates kept: they are term counts)."""
    out: list[str] = []
    text = unicodedata.normalize("NFKC", text)
    for m in _TOKEN.finditer(text):
        cjk = m.group("cjk")
        if cjk is not None:
            out.extend(_bigrams(cjk))
        else:
            term = _word_term(m.group("word"))
            if term is not None:
                out.append(term)
    return out


@dataclass(frozen=True, slots=True)
class Term:
    """One query term: an index term, or a prefix (``집*``) for a one-syllable Korean word."""

    text: str
    prefix: bool = False

    def fts(self) -> str:
        """The term as an FTS5 expression (quoted, so never FTS5 syntax)."""
        return f'"{self.text}"*' if self.prefix else f'"{self.text}"'

    def matches(self, terms: frozenset[str]) -> bool:
        if self.prefix:
            return any(t.startswith(self.text) for t in terms)
        return self.text in terms


def _strip_particle(word: str) -> str:
    for p in _PARTICLES:
        if word.endswith(p) and len(word) - len(p) >= 2:
            return word[: -len(p)]
    return word


def _korean_terms(run: str) -> list[Term]:
    if run in KOREAN_STOPWORDS or run in _PARTICLE_SET:
        return []
    stem_ = _strip_particle(run)
    if stem_ in KOREAN_STOPWORDS:
        return []
    if len(run) == 1:
        return [Term(run, prefix=True)]
    terms = [Term(b) for b in _bigrams(stem_)]
    if len(run) == 2 and run[1] in _ONE_SYLLABLE_PARTICLES:
        terms.append(Term(run[0], prefix=True))  # 집에 -> also 집은, 집이 ...
    return terms


def query_terms(text: str) -> list[Term]:
    """The distinct terms of a query, in order; empty when nothing in it is searchable."""
    out: list[Term] = []
    seen: set[Term] = set()
    text = unicodedata.normalize("NFKC", text)
    for m in _TOKEN.finditer(text):
        cjk = m.group("cjk")
        if cjk is not None:
            if HANGUL_RUN.fullmatch(cjk):
                terms = _korean_terms(cjk)
            else:
                terms = [Term(b) for b in _bigrams(cjk)]
        else:
            folded = _fold(m.group("word"))
            if folded in QUERY_STOPWORDS or folded in KOREAN_STOPWORDS:
                continue
            term = _word_term(m.group("word"))
            terms = [Term(term)] if term and stem(folded) not in QUERY_STOPWORDS else []
        for t in terms:
            if t not in seen:
                seen.add(t)
                out.append(t)
    return out


def fts_expression(terms: list[Term]) -> str:
    """An FTS5 MATCH expression for any of ``terms`` (empty string for none)."""
    return " OR ".join(t.fts() for t in terms)
