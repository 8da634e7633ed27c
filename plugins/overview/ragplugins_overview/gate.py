"""When the overview acts: the two conditions derived from the corpus and the query, not fitted constants.

1. *The overview ranking must stand out from noise in this corpus.* Without any signal, the
   scores of n documents are exchangeable, and the gap between the best two is about exponential
   with mean sigma / sqrt(2 ln n) (the spacing at the top of n draws from a Gaussian-like tail).
   So the gap that noise exceeds on a fraction ``alpha`` of queries is
   ``ln(1 / alpha) / sqrt(2 ln n)`` robust standard deviations: the threshold follows from the
   number of documents in the index, read from the overviews at query time, with one
   conventional false-alarm rate (1 %), instead of a gap fitted on the public questions.
2. *The first stage must leave the choice open.* The overviews judge whole documents; the first
   stage judges chunks. When the first stage already ranks the picked document first, steering
   towards it can only crowd out the other documents' chunks (measured: the answer left the top
   10 on a pointer question); when it ranks the picked document below its runner-up, the
   overviews overrule it, which is what lost on questions that describe one document to ask about
   another. The overview therefore only settles a contest the candidate list itself shows: the
   picked documents hold the first stage's second candidate and not its first, and the first
   place is in doubt: its lead over the runner-up is no larger than the typical (median) step
   between the candidates below it in the top 10, this query's own scale. A first place that
   stands out is no contest (measured: three answers at rank 1 pushed down on 168 added dev
   questions before this check), and a list of fewer than four candidates (top_k = 3) gives no
   scale to tell by, so the overview leaves it.
3. *The sentence that asks must want the same documents.* A question of several sentences may retell
   one document to ask about another ("The time module covers time access and conversions and refers
   to related modules. How can I check whether a year has 366 days?"): the retelling matches the
   retold document's overview best of all, and the asking sentence wants another. So the overview
   acts on such a question only when the overviews' best document for its asking sentence (the last
   one that ends with a question mark, else the last) is among the picked ones. A question of one
   sentence has nothing to retell apart from what it asks.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from llama_index.core.schema import NodeWithScore

# The share of queries on which scores without any signal would pass the gap test.
FALSE_ALARM = 0.01
# The fewest scored candidates whose steps below the first place tell whether it is in doubt (the median of two).
MIN_CANDIDATES = 4
# A sentence ends at ., ? or ! before white space ("os.path" and "3.11" stay whole).
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")


def noise_gap(n_documents: int, false_alarm: float = FALSE_ALARM) -> float:
    """The top gap (in robust standard deviations) that ``n_documents`` signal-free scores exceed on a
    ``false_alarm`` share of queries; infinite below 3 documents, where no gap can be told from noise."""
    if n_documents < 3:
        return math.inf
    return math.log(1.0 / false_alarm) / math.sqrt(2.0 * math.log(n_documents))


def leaves_open(picked: Sequence[str], candidates: Sequence[NodeWithScore]) -> tuple[bool, str]:
    """Whether the first stage leaves the choice of document open for the ``picked`` documents, and why."""
    if len(candidates) < 2:
        return False, "the first stage returned fewer than two candidates: there is no contest to settle"
    first, second = candidates[0].node.ref_doc_id, candidates[1].node.ref_doc_id
    chosen = set(picked)
    if first in chosen:
        return False, ("the first stage already ranks a picked document first; steering would only crowd out "
                       "the other documents' chunks")
    if second not in chosen:
        return False, ("the picked documents do not hold the first stage's runner-up; acting would overrule "
                       "the first stage, not settle a contest it left open")
    top = candidates[:10]
    scores = [float(c.score) for c in top if c.score is not None]
    if len(scores) == len(top):   # a retriever without scores: no scale to judge by
        if len(scores) < MIN_CANDIDATES:
            # At top_k = 3 the list is too short to give this query's scale, and acting there lowered three new
            # users' answers that the gate left alone at top_k = 20 (the Debian New Maintainers' Guide's q15,
            # Asymptote's as09, Click's ck13): an app asking for 3 is to get what asking for 20 puts first.
            return False, (f"the first stage returned {len(scores)} candidates, too few to tell whether its first "
                           f"place is in doubt (the steps between the candidates below it, at least "
                           f"{MIN_CANDIDATES} in all, give the query's scale): nothing to settle at this top_k")
        # Is the first place in doubt? Its lead over the runner-up against the typical step between the
        # candidates below it (this query's own scale): a first place that stands out is not a contest.
        lead = scores[0] - scores[1]
        steps = sorted(a - b for a, b in zip(scores[1:], scores[2:]))
        typical = steps[len(steps) // 2]
        if lead > typical:
            return False, (f"the first stage's first place stands out (lead {lead:.4f} over the runner-up, a typical "
                           f"step below it {typical:.4f}): there is no contest to settle")
    return True, "the picked document holds the first stage's runner-up, below another document's chunk"


def asking_sentence(query: str) -> str | None:
    """The sentence of a question of several sentences that asks: the last one ending with a question mark,
    else the last one; None for a question of one sentence."""
    sentences = [s for s in _SENTENCE_END.split(query.strip()) if s.strip()]
    if len(sentences) < 2:
        return None
    return next((s for s in reversed(sentences) if s.rstrip().endswith("?")), sentences[-1])
