"""The report's judges section: model judges beside the annotators (docs/judges.md).

Computed from the snapshot (``judges_from_study``), given to the JSON report as its
``judges`` section (``judges_json``) and to the terminal as a few lines (``judges_lines``).
The people's own figures never count a judge: the annotation section's reliability tables
show each beside the same figure with the judges as more raters (``beside_people``, and
``reliability_records`` for the JSON), and this section sets the judge against people."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from analytics.annotations.judge_flags import FLAG_COLUMNS, flagged_keys, judge_flags
from analytics.annotations.judges import JudgeFindings, judge_findings
from analytics.annotations.ratings import (
    analyse,
    final_values,
    instruments_for,
    item_scales,
)
from analytics.data.loading import StudyData
from analytics.report.document import Block, Bullets, Heading, Paragraph
from analytics.statistics import bounded
from bot.core.vocabulary import EventKind, FlagReason
from bot.engine.annotating.injection import ADDRESS_PATTERNS

if TYPE_CHECKING:
    from analytics.report.numbers import Report


@dataclass(frozen=True)
class JudgesSection:
    findings: JudgeFindings
    reliability: pd.DataFrame
    """The reliability tables with every judge as one more rater."""
    raters: dict[tuple[str, str, str], str]
    """(job, item, level) a judge rated -> who rated it: ``people + model gpt-judge``."""
    provenance: pd.DataFrame
    """Per judge: model, endpoint host, prompt hash, temperature, seed, first and last
    judgement, judgements by outcome, calls and tokens."""
    flags: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=FLAG_COLUMNS))
    """The targets whose text addresses the judge (``FLAG_COLUMNS``): the judges' ratings
    and votes of them are left out of every figure above."""


PROVENANCE_COLUMNS = [
    "job", "judge", "model", "host", "prompt_hash", "temperature", "seed", "first_at",
    "last_at", "rated", "unparseable", "failed", "calls", "prompt_tokens", "completion_tokens",
]  # fmt: skip


def _lengths(data: StudyData) -> dict[tuple[str, str], float]:
    """(level, target) -> characters the system said in what was rated: the exchange's
    reply, or every reply of the conversation."""
    found: dict[tuple[str, str], float] = {}
    exchanges = data.exchanges
    if exchanges.empty:
        return found
    said = exchanges["system_text"].fillna("").astype(str).str.len()
    for session, turn, size in zip(exchanges["session_id"], exchanges["turn"], said, strict=True):
        found[("exchange", f"{session}#{int(turn)}")] = float(size)
        found[("session", str(session))] = found.get(("session", str(session)), 0.0) + size
    return found


def _said(data: StudyData) -> dict[tuple[str, str], float]:
    """(where, system) -> characters the system said there: every reply of a stored
    conversation (where: its session), and each side's reply of a side-by-side turn
    (where: ``session#turn``, from the turn's ``sides_replied`` event)."""
    found: dict[tuple[str, str], float] = {}
    exchanges = data.exchanges
    if not exchanges.empty:
        sizes = exchanges["system_text"].astype(object).fillna("").astype(str).str.len()
        keys = [exchanges["session_id"].astype(str), exchanges["system_id"].astype(str)]
        summed = sizes.groupby(keys, sort=False).sum()
        where = summed.index.get_level_values(0).astype(str)
        who = summed.index.get_level_values(1).astype(str)
        found.update(zip(zip(where, who, strict=True), summed.astype(float), strict=True))
    events = data.events
    if events.empty:
        return found
    replied = events[events["kind"].astype(object) == EventKind.SIDES_REPLIED.value]
    for session, logged in zip(replied["session_id"], replied["data"], strict=True):
        turn = logged if isinstance(logged, dict) else json.loads(str(logged))
        for side in turn.get("replies", []):
            if not side.get("error") and isinstance(side.get("text"), str):
                found[(f"{session}#{int(turn['turn'])}", str(side["system"]))] = float(
                    len(side["text"])
                )
    return found


def _families(data: StudyData) -> tuple[dict[str, str], dict[str, str]]:
    """(a judge's pseudonym -> its model family, a system -> its family), as the studies
    name them."""
    judges: dict[str, str] = {}
    systems: dict[str, str] = {}
    for bundle in data.bundles.values():
        systems.update({s.id: s.family for s in bundle.study.systems if s.family})
        for job in bundle.jobs.values():
            judges.update({f"model:{j.id}": j.family for j in job.judges if j.family})
    return judges, systems


def judges_from_study(data: StudyData) -> JudgesSection | None:
    """None, at no cost, when no judge rated or voted."""
    ratings = data.annotations
    judged = not ratings.empty and (ratings["origin"].astype(str) == "model").any()
    voted = not data.votes.empty and (data.votes["rater_kind"].astype(str) == "model").any()
    if not judged and not voted:
        return None
    flags = judge_flags(data)
    ratings, votes = _unflagged(ratings, data.votes, flagged_keys(flags))
    named = {str(i) for i in ratings["instrument_id"].dropna().unique()}
    scales = item_scales(instruments_for(named, data))
    judge_families, system_families = _families(data)
    findings = judge_findings(
        ratings,
        final_values(data),
        scales,
        lengths=_lengths(data),
        votes=votes,
        judge_families=judge_families,
        system_families=system_families,
        said=_said(data),
    )
    if findings is None:
        return None
    everyone = analyse(ratings, scales) if judged else None
    reliability = everyone.reliability if everyone is not None else pd.DataFrame()
    return JudgesSection(findings, reliability, _raters(ratings), _provenance(data), flags)


def _unflagged(
    ratings: pd.DataFrame, votes: pd.DataFrame, flagged: set[tuple[str, str, str]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ratings and votes without the judges' of flagged targets (people's stay: the
    text speaks to a model, not to them)."""
    if not flagged:
        return ratings, votes
    keys = zip(
        ratings["job"].astype(str),
        ratings["level"].astype(str),
        ratings["target"].astype(str),
        strict=True,
    )
    hit = pd.Series([key in flagged for key in keys], index=ratings.index, dtype=bool)
    ratings = ratings[~(hit & (ratings["origin"].astype(str) == "model"))]
    pairs = {target for _, level, target in flagged if level == "pair"}
    model = votes["rater_kind"].astype(str) == "model"
    votes = votes[~(model & votes["session"].astype(object).isin(pairs))]
    return ratings, votes


def _raters(ratings: pd.DataFrame) -> dict[tuple[str, str, str], str]:
    models = ratings[ratings["origin"].astype(str) == "model"]
    found: dict[tuple[str, str, str], str] = {}
    for (job, item, level), part in models.groupby(["job", "item_id", "level"], sort=True):
        named = sorted({str(a).removeprefix("model:") for a in part["annotator"]})
        found[(str(job), str(item), str(level))] = "people + model " + ", ".join(named)
    return found


RELIABILITY_KEYS = ["job", "instrument_id", "item", "level", "system", "statistic"]
PEOPLE = "people"
"""The raters of the annotation section's own figures."""


def _key(row: dict[str, Any]) -> tuple[str, ...]:
    return tuple("" if _missing(row[k]) else str(row[k]) for k in RELIABILITY_KEYS)


def _judged(section: JudgesSection | None) -> list[dict[str, Any]]:
    """The judges' reliability rows of the items a judge rated, with their raters named."""
    if section is None or section.reliability.empty:
        return []
    rows = []
    for row in _rows(section.reliability):
        raters = section.raters.get((str(row["job"]), str(row["item"]), str(row["level"])))
        if raters is not None:
            rows.append({**row, "raters": raters})
    return rows


def beside_people(people: pd.DataFrame, section: JudgesSection | None) -> pd.DataFrame:
    """The annotation section's reliability rows (people only, unchanged), each followed by
    the same figure with the judges as more raters where a judge rated the item; column
    ``raters`` tells them apart. ``people`` itself when no judge rated."""
    judged = _judged(section)
    if not judged or people.empty:
        return people
    shown = [{**row, "raters": PEOPLE} for row in _rows(people)]
    after: dict[tuple[str, ...], int] = {}  # a key, and its item·level·system's last row
    for at, row in enumerate(shown):
        key = _key(row)
        after[key] = at
        after[key[:-1]] = at
    placed = [(float(at), row) for at, row in enumerate(shown)]
    for extra, row in enumerate(judged):
        key = _key(row)
        follows = after.get(key, after.get(key[:-1]))
        if follows is not None:
            placed.append((follows + 0.5 + extra * 1e-6, row))
    placed.sort(key=lambda pair: pair[0])
    return pd.DataFrame([row for _, row in placed], columns=[*people.columns, "raters"])


def reliability_records(report: Report) -> list[dict[str, Any]]:
    """The JSON report's ``reliability``: people's rows as ever; where a judge rated the
    item, each row's ``with_judges`` gives the same figure with the judges as more raters
    (null where it could not be computed), so that no figure changes meaning."""
    from analytics.report.render_json import records

    if report.annotations is None:
        return []
    people = records(report.annotations.reliability)
    if report.judges is None or not report.judges.raters:
        return people
    judged = {_key(row): row for row in records(pd.DataFrame(_judged(report.judges)))}
    shown = ("raters", "value", "ci_low", "ci_high", "n_targets", "n_annotators")
    for row in people:
        rated = report.judges.raters.get((str(row["job"]), str(row["item"]), str(row["level"])))
        found = judged.get(_key(row))
        row["with_judges"] = (
            None if rated is None or found is None else {k: found[k] for k in shown}
        )
    return people


def _provenance(data: StudyData) -> pd.DataFrame:
    made = pd.DataFrame([vars(j) for j in data.judgements])
    costs = {c.judge: c for c in data.judge_costs}
    if made.empty:
        return pd.DataFrame(columns=PROVENANCE_COLUMNS)
    rows = []
    keys = ["job", "judge", "model", "host", "prompt_hash", "temperature", "seed"]
    for key, part in made.groupby(keys, sort=True, dropna=False):
        outcomes = part["outcome"].value_counts()
        cost = costs.get(str(key[1]))
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "first_at": _when(part["at"].min()),
                "last_at": _when(part["at"].max()),
                "rated": int(outcomes.get("rated", 0)),
                "unparseable": int(outcomes.get("unparseable", 0)),
                "failed": int(outcomes.get("failed", 0)),
                "calls": None if cost is None else cost.calls,
                "prompt_tokens": None if cost is None else cost.prompt_tokens,
                "completion_tokens": None if cost is None else cost.completion_tokens,
            }
        )
    return pd.DataFrame(rows, columns=PROVENANCE_COLUMNS)


def _when(at: float) -> str:
    """A judgement's time to the second, in UTC (ISO 8601)."""
    return pd.to_datetime(at, unit="s", utc=True).floor("s").isoformat()


def judges_json(section: JudgesSection) -> dict[str, Any]:
    from analytics.report.render_json import records

    found = section.findings
    return {
        "agreement": records(found.agreement),
        "verdicts": records(found.verdicts),
        "reliability_with_judges": records(section.reliability),
        "position_bias": records(found.position),
        "length_bias": records(found.length),
        "pair_length_bias": records(found.pair_length),
        "pair_agreement": records(found.pair_agreement),
        "prediction_powered": records(found.prediction_powered),
        "self_preference": records(found.self_preference),
        "provenance": records(section.provenance),
        "flagged": records(section.flags),
        "address_patterns": [vars(p) for p in ADDRESS_PATTERNS],
    }


def _rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{str(k): v for k, v in r.items()} for r in frame.to_dict("records")]


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def judges_lines(section: JudgesSection) -> list[str]:
    """The section in a few plain lines: each judge's verdict per item, its biases and its
    prediction-powered means (where its judgements came from is in the provenance)."""
    lines = ["Model judges beside people"]
    for r in _rows(section.findings.verdicts):
        lines.append(
            f"  {r['judge']} on {r['item']} ({r['level']}): kappa with annotators"
            f" {r['judge_kappa']:.2f}, annotators with each other {r['human_kappa']:.2f}:"
            f" {r['verdict']}"
        )
    for r in _rows(section.findings.pair_agreement):
        if not r["pairs"]:
            lines.append(
                f"  {r['judge']} on {r['question']} (ACUTE {r['job']}): no pair both it and"
                f" people's majority decided ({r['flipped']} flipped with the order,"
                f" {r['split']} split people)"
            )
            continue
        kappa = (
            "kappa —"
            if _missing(r["kappa"])
            else f"kappa {r['kappa']:.2f}"
            + (
                ""
                if _missing(r["kappa_low"])
                else f" [{r['kappa_low']:.2f}, {r['kappa_high']:.2f}]"
            )
        )
        lines.append(
            f"  {r['judge']} on {r['question']} (ACUTE {r['job']}): chose as people's majority"
            f" on {r['agreed']} of {r['pairs']} pairs, {r['agreement']:.0%}"
            f" [{r['agreement_low']:.0%}, {r['agreement_high']:.0%}], Cohen's {kappa}"
            f" (left out: {r['flipped']} flipped with the order, {r['split']} split people)"
        )
    for r in _rows(section.findings.position):
        share = r["share_consistent"]
        consistent = "" if _missing(share) else f", swap-consistent {share:.0%}"
        lines.append(
            f"  {r['rater']} on {r['question']}: first shown wins {r['share_first_wins']:.0%}"
            f" [{r['first_wins_low']:.0%}, {r['first_wins_high']:.0%}] of"
            f" {r['verdicts']} verdicts{consistent}"
        )
    lines += _length_lines(section.findings)
    lines += flag_lines(section.flags)
    for r in _rows(section.findings.prediction_powered):
        system = "all systems" if _missing(r["system"]) else r["system"]
        lines.append(
            f"  {r['judge']} on {r['item']} ({r['level']}), {system}: prediction-powered"
            f" (PPI++, λ = {r['power']:.2f})"
            f" {'win rate' if r['level'] == 'pair' else 'mean'}"
            f" {r['mean']:.2f} [{r['low']:.2f}, {r['high']:.2f}] from {r['n_judged']} judged,"
            f" {r['n_people']} of them rated by people (people only {r['people_mean']:.2f}"
            f" [{r['people_low']:.2f}, {r['people_high']:.2f}]; judge only"
            f" {r['judge_mean']:.2f}); as narrow as {r['equivalent_people']:.0f} people's ratings"
        )
    for r in _rows(section.findings.self_preference):
        low, high = r["low"], r["high"]
        interval = "" if _missing(low) else f" [{low:+.2f}, {high:+.2f}]"
        if r["level"] == "pair" and _missing(r["people_own"]):
            lines.append(
                f"  {r['judge']} ({r['family']}: {r['own_systems']}) on {r['item']} (pair):"
                f" wins for its family {r['judge_own']:.0%} of {r['n_own']} verdicts; no"
                " people's votes on such pairs to compare with"
            )
            continue
        if r["level"] == "pair":
            said = (
                f"wins for its family {r['judge_own']:.0%} of {r['n_own']} verdicts, people's"
                f" {r['people_own']:.0%} of {r['n_other']}"
            )
        else:
            said = (
                f"rates its family {r['judge_own'] - r['judge_other']:+.2f} above the others,"
                f" people {r['people_own'] - r['people_other']:+.2f}"
            )
        lines.append(
            f"  {r['judge']} ({r['family']}: {r['own_systems']}) on {r['item']} ({r['level']}):"
            f" {said}; self-preference {r['self_preference']:+.2f}{interval}"
        )
    return lines


def flag_lines(flags: pd.DataFrame, shown: int = 10) -> list[str]:
    """How many targets' text addresses the judge, left out of its figures, and the first
    ``shown`` of them with the patterns each matched."""
    if flags.empty:
        return []
    lines = [
        f"  {len(flags)} targets flagged {FlagReason.ADDRESSES_JUDGE.value} (their text"
        " addresses the judge): the judges' ratings and votes of them are left out of the"
        " figures above; the flag_reason column of the export's annotation_ratings marks them"
    ]
    for r in _rows(flags.head(shown)):
        lines.append(f"  flagged: {r['job']} {r['level']} {r['target']}: {r['patterns']}")
    if len(flags) > shown:
        lines.append(f"  flagged: and {len(flags) - shown} more (JSON: judges.flagged)")
    return lines


def _length_lines(found: JudgeFindings) -> list[str]:
    """Length bias: rank correlations of ratings with the length of what was rated, and
    how often the side of a pair that said more won, each judge beside people."""
    lines = []
    for r in _rows(found.length):
        rho = "no correlation (too few targets)" if _missing(r["rho"]) else f"{r['rho']:+.2f}"
        interval = "" if _missing(r["low"]) else f" [{r['low']:+.2f}, {r['high']:+.2f}]"
        lines.append(
            f"  {r['rater']} on {r['item']} ({r['level']}): Spearman's rho of the rating with"
            f" the length of what was rated {rho}{interval} over {r['n']} targets"
        )
    for r in _rows(found.pair_length):
        where = "side by side" if r["source"] == "side_by_side" else f"ACUTE {r['job']}"
        if _missing(r["share_longer"]):
            lines.append(
                f"  {r['rater']} on {r['question']} ({where}): no vote between sides of"
                " different lengths"
            )
            continue
        interval = "" if _missing(r["low"]) else f" [{r['low']:.0%}, {r['high']:.0%}]"
        rho = (
            ""
            if _missing(r["rho"])
            else f"; rho with the length difference {r['rho']:+.2f}"
            + ("" if _missing(r["rho_low"]) else f" [{r['rho_low']:+.2f}, {r['rho_high']:+.2f}]")
        )
        lines.append(
            f"  {r['rater']} on {r['question']} ({where}): the side that said more won"
            f" {r['share_longer']:.0%}{interval} of {r['verdicts']} votes on {r['pairs']}"
            f" pairs{rho}"
        )
    return lines


def provenance_lines(section: JudgesSection) -> list[str]:
    """Each judge's provenance in a line (the judges section and the report's provenance):
    model, endpoint host, prompt hash, temperature, seed, dates, outcomes, calls, tokens."""
    lines = []
    for r in _rows(section.provenance):
        seed = "none" if _missing(r["seed"]) else str(int(r["seed"]))
        calls = "" if _missing(r["calls"]) else f"{int(r['calls'])} calls, "
        tokens = (
            "tokens not counted"
            if _missing(r["prompt_tokens"])
            else f"tokens {int(r['prompt_tokens'])} in, {int(r['completion_tokens'])} out"
        )
        lines.append(
            f"Model judge {r['judge']} ({r['job']}): {r['model']} at {r['host']}, prompt"
            f" {r['prompt_hash']}, temperature {r['temperature']}, seed {seed},"
            f" {r['first_at']} to {r['last_at']}; {r['rated']} rated, {r['unparseable']}"
            f" unparseable, {r['failed']} failed; {calls}{tokens}"
        )
    return lines


def judges_blocks(report: Report) -> list[Block]:
    """The section for people to read; nothing when no judge rated."""
    if report.judges is None:
        return []
    lines = judges_lines(report.judges)
    return [
        Heading("Model judges"),
        Paragraph(
            "A judge's ratings are compared with each annotator's and with the adjudicated"
            " value, beside the annotators' agreement with each other (docs/judges.md); in"
            " the annotation section above they count only in the rows of raters 'people +"
            " model'. Length bias of pairs: of the votes between sides of different lengths,"
            " the share the side that said more won (0.5: no preference; a judge's verdicts"
            " in both orders), beside people's votes on the same pairs, with 95% bootstrap"
            " intervals over pairs. A judge of ACUTE pairs is set against people's majority"
            " on the pairs both decided (its verdict held in both orders, people did not"
            " split): the share where it chose the same system (Wilson 95% interval) and"
            " Cohen's kappa (95% bootstrap interval over pairs). Prediction-powered means and"
            " win rates are PPI++ (Angelopoulos, Duchi & Zrnic 2023): people's mean plus λ"
            " times the judge's shift from the targets people rated to those it alone rated,"
            " λ power-tuned in [0, 1]; none where people rated every target; every interval"
            f" {bounded.METHOD}. A target whose participants' or systems' words address"
            f" the judge is flagged {FlagReason.ADDRESSES_JUDGE.value}, and the judges' ratings"
            " and votes of it are left out of this section's figures; the patterns: "
            + "; ".join(f"{p.name} ({p.meaning})" for p in ADDRESS_PATTERNS)
            + ".",
            "method",
        ),
        Bullets(tuple(line.strip() for line in lines[1:])),
    ]
