"""How much the words of a query found, and when the vectors lead: the brainstem's ``lexical``."""

from __future__ import annotations

from datetime import UTC, datetime

from agent_memory_retrieval.docs import Hit, IndexDoc
from agent_memory_search.brainstem.lexical import coverage, terms, vectors_lead
from agent_memory_search.brainstem.planner import WEIGHTS


def hit(i: str, text: str, context: str = "") -> Hit:
    doc = IndexDoc(
        id=i,
        type="event",
        tenant="t",
        project_id="p",
        agent_id="a",
        session_id="s",
        ts=datetime(2026, 9, 1, tzinfo=UTC),
        level="event",
        text=text,
        context=context,
    )
    return Hit(id=i, score=1.0, doc=doc)


def test_the_words_of_a_query_leave_out_what_asks_or_glues() -> None:
    assert terms("How did we fix the QueuePool limit reached errors?") == {
        "fix",
        "queuepool",
        "limit",
        "reach",
        "error",
    }
    assert terms("Which port does the gateway use, 8080?") == {"port", "gateway", "use", "8080"}
    # a conversation's things stay words: "what show did she watch"
    assert terms("What show did Melanie watch?") == {
        "show",
        "melani",
        "watch",
    }  # stemmed alike on both sides


def test_coverage_is_the_best_share_of_the_query_words_one_of_the_first_hits_holds() -> None:
    words = "Why were late-night card charges left out of the nightly export?"
    # late, night (and nightly), card, charg(es), left, export: six words
    hits = [
        hit("a", "We charge the card twice in the sandbox."),  # card, charg: 2 of 6
        hit("b", "Finance wants a CSV export of the ledger.", context="late night"),  # 3 of 6
        hit("c", "nothing to see"),
        hit("d", "late night card charges left out of the nightly export"),  # beyond the first 3
    ]
    assert coverage(words, hits) == 3 / 6
    assert coverage(words, hits[:1]) == 2 / 6
    assert coverage(words, []) is None
    assert coverage("", hits) is None


def test_vectors_lead_only_when_the_words_covered_little() -> None:
    answer = WEIGHTS["answer"]
    assert answer["bm25"] > answer["vector"]
    led = vectors_lead(answer, 1 / 6, 0.2)
    assert led == {**answer, "vector": answer["bm25"], "bm25": answer["vector"]}
    assert vectors_lead(answer, 0.25, 0.2) is None  # the words found a quarter: they lead
    assert vectors_lead(answer, None, 0.2) is None  # BM25 found nothing to judge
    assert vectors_lead(answer, 0.1, 0.0) is None  # switched off
    # an intent where the vectors already lead is left alone
    assert vectors_lead(WEIGHTS["explore"], 0.0, 0.2) is None
