"""Questions about two short biome-config sessions of OpenCode (test split), written from the
transcripts alone.

The sessions (``SOURCES.md``): OpenCode in @nivalis/biome-config (Nivalis' shared Biome
configuration), captured by Entire. ses_29e1f1c9, 2026-04-06: a review of the reusable
``biome-insights-artifact.yaml`` workflow (its purpose, structure, reliability, risks), then why
its ``shared-config-version`` input is optional. ses_288a619a, 2026-04-10: ``pnpm run lint``
failing on ``package.json``'s formatting, the choice between reformatting and a config change,
and a ``package.json`` override in ``biome.json``. Each transcript is OpenCode's storage written
back from the published ``opencode export``. Written on 2026-12-07 by reading the transcripts,
before any change they could inform; the format and the rules are those of ``questions.py``,
except the refs: a message's id (``msg_...``: a prompt or a reply) or a tool part's ``callID``
(``call_...``: the call and its result). OpenCode's times are epoch milliseconds, so no
question here is asked by ``day`` or ``since``.
"""

from __future__ import annotations

from pathlib import Path

from tests.bench.real.questions import RealQ

SPLIT = "test"
RUNTIME = "opencode"
PROJECT = "biome-config"
HERE = Path(__file__).resolve().parent / "transcripts" / "biome-config"
STORED = Path("session") / "c2fa228598587bde6f721bcb3553def3ac03d346"
SOURCES: tuple[tuple[str, Path], ...] = (
    (PROJECT, HERE / "ses_29e1f1c9" / STORED / "ses_29e1f1c97ffesfT1llQ2jmcQIv.json"),
    (PROJECT, HERE / "ses_288a619a" / STORED / "ses_288a619a2ffe7ERuoRX8IhBLBz.json"),
)

REVIEW = "msg_d61e1164e002Lri3P6MU4nosmH"  # the review of the insights workflow
OPTIONAL_ASKED = "msg_d61e5ee9000138sfjjJ0fxdGPo"
OPTIONAL_WHY = "msg_d61e5ee9a002sA5XpicY1QcngW"
LINT_OUTPUT = "msg_d775a1f240010aPJtFumiNWiC6"  # the failing check, pasted
ROOT_CAUSE = "msg_d775a691b002PeVTL0qVbKYZSi"  # expand "auto", two ways out
MULTILINE = "msg_d775b6554001fA7tySZDGd6x5s"  # the user's choice
OVERRIDE_DONE = "msg_d775bc390002pR43LTBcOyKSYi"
OVERRIDE_PATCH = "call_fh942WPdtwYe5I8ZRuqFG9oE"

QUESTIONS: tuple[RealQ, ...] = (
    RealQ(
        "fact",
        "What is the biome-insights-artifact workflow for?",
        PROJECT,
        ("msg_d61e0e37c001Ic6KgAhnGt7ABn", REVIEW),
    ),
    RealQ(
        "how",
        "How does the insights workflow still upload its artifact and comment on the PR when "
        "Biome reports problems?",
        PROJECT,
        (REVIEW,),
    ),
    RealQ(
        "fact",
        "What improvements did the review of the insights workflow suggest?",
        PROJECT,
        (REVIEW,),
    ),
    RealQ(
        "decision",
        "Why is the shared-config-version input optional?",
        PROJECT,
        (OPTIONAL_ASKED, OPTIONAL_WHY),
    ),
    RealQ(
        "paraphrase",
        "Does a caller have to tell us which release of the common preset it uses?",
        PROJECT,
        (OPTIONAL_WHY,),
    ),
    RealQ(
        "fix",
        "Why did pnpm run lint fail on package.json?",
        PROJECT,
        (LINT_OUTPUT, ROOT_CAUSE),
    ),
    RealQ(
        "decision",
        "Which two ways out of the package.json lint error were offered, and which one was "
        "recommended?",
        PROJECT,
        (ROOT_CAUSE,),
    ),
    RealQ(
        "preference",
        "Did I want package.json's short arrays collapsed or kept on several lines?",
        PROJECT,
        (MULTILINE, OVERRIDE_DONE),
    ),
    RealQ(
        "artifact",
        "Which file got the override for package.json, and what does it set?",
        PROJECT,
        (OVERRIDE_PATCH, OVERRIDE_DONE),
    ),
    RealQ(
        "how",
        "How was the old JSON override split so that tsconfig and the others keep their "
        "parser settings?",
        PROJECT,
        (OVERRIDE_PATCH, OVERRIDE_DONE),
    ),
    RealQ(
        "paraphrase",
        "What did we change so the manifest's short lists stop being folded onto one row?",
        PROJECT,
        (OVERRIDE_DONE,),
    ),
)

# Plausible questions about biome-config that neither session answers (checked by grep).
UNANSWERABLE: tuple[tuple[str, str], ...] = (
    (PROJECT, "Does Renovate or Dependabot keep the Biome dependency up to date?"),
    (PROJECT, "How do projects extend this shared config from their own biome.json?"),
)
