"""The export reference, written from the columns each exported file is declared with.

``python -m analytics.io.export_reference > docs/reference/export-files.md`` writes the page;
a test fails when the committed page differs from what the code declares, and another when
the export writes a file this list does not name, so the reference cannot drift from what
``ozlab export`` writes. Each column's meaning is the one ``columns.csv`` carries.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from analytics.io.export import (
    CODEBOOK,
    CODEBOOK_VALUES,
    COLUMNS,
    COMMANDS,
    EXCHANGES,
    RESPONSES,
    SESSIONS,
    WIDE_KEYS,
    WIZARD_ACTIONS,
    Column,
)
from analytics.io.export_annotations import ANNOTATION_FINAL, ANNOTATION_KEYS, ANNOTATION_RATINGS
from analytics.io.export_media import MEDIA
from analytics.io.export_stress import STRESS_RESULTS
from analytics.io.export_votes import VOTES

__all__ = ["FILES", "ExportFile", "reference"]


@dataclass(frozen=True)
class ExportFile:
    """One file of an export: when it is written, what a row is, its declared columns and,
    for a wide file, the columns that follow them (one per item)."""

    name: str
    when: str
    row: str
    columns: list[Column]
    then: str = ""


FILES: tuple[ExportFile, ...] = (
    ExportFile("sessions", "always", "one task of one participant", SESSIONS),
    ExportFile(
        "exchanges", "always", "one exchange: a participant's turn and the reply", EXCHANGES
    ),
    ExportFile("responses", "always", "one answer to one item", RESPONSES),
    ExportFile(
        "wizard_actions", "always", "one action of a wizard the bot applied", WIZARD_ACTIONS
    ),
    ExportFile("commands", "always", "one command written in the wizard console", COMMANDS),
    ExportFile("codebook", "always", "one item of an instrument", CODEBOOK),
    ExportFile("codebook_values", "always", "one option of an item", CODEBOOK_VALUES),
    ExportFile(
        "responses_wide",
        "with `--wide`",
        "one participant × session (answers outside any task repeat on each of the "
        "participant's rows)",
        WIDE_KEYS,
        "then one column per item, named as `codebook.variable` says (ITEM_tN for ratings of "
        "turn N, one 0/1 column per option of a multi-choice item, one rank column per "
        "option of a ranking)",
    ),
    ExportFile(
        "annotation_ratings",
        "a study with annotation ratings (a job, or `ozlab import annotations`)",
        "one rating of one annotator",
        ANNOTATION_RATINGS,
    ),
    ExportFile(
        "annotation_final",
        "a study with annotation ratings",
        "one target and item: its final value by the report's adjudication rule",
        ANNOTATION_FINAL,
    ),
    ExportFile(
        "annotation_final_wide",
        "with `--wide`, a study with annotation ratings",
        "one target (job, level, target)",
        ANNOTATION_KEYS,
        "then one column per item with its final value and the item's value labels",
    ),
    ExportFile(
        "votes",
        "a study with votes (side by side, preference items, ACUTE pairs, or `ozlab import votes`)",
        "one vote between two systems",
        VOTES,
    ),
    ExportFile(
        "media",
        "a study whose participants sent voice notes or photos",
        "one file a participant sent: the manifest of the media and their transcripts",
        MEDIA,
    ),
    ExportFile(
        "stress_results",
        "a study whose stress tests were replayed (`ozlab stress run`)",
        "one stress test of one system",
        STRESS_RESULTS,
    ),
    ExportFile("columns", "always", "one column of one exported file", COLUMNS),
)

_HEADER = """\
# The export files

<!-- Written by `python -m analytics.io.export_reference > docs/reference/export-files.md`;
     a test fails when it differs from the export's declared columns. Edit those instead. -->

Every file `ozlab export` may write, when it writes it, what one row is, and each column with
its type and meaning, as `columns.csv` gives them in every export. Types: string, integer,
number (decimal) and time (ISO 8601 UTC); every column has its type whatever the data.
How to export, the formats and what ozlab does to CSV cells are in
[Export for a paper](../export.md).
"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def reference() -> str:
    """The whole page: a list of the files, then each file's columns."""
    out = [_HEADER, "| file | written | one row is |", "|---|---|---|"]
    out += [f"| [`{f.name}`](#{f.name}) | {f.when} | {_cell(f.row)} |" for f in FILES]
    out.append("")
    for f in FILES:
        out += [f"## {f.name}", "", f"Written: {f.when}. One row: {f.row}.", ""]
        out += ["| column | type | meaning |", "|---|---|---|"]
        out += [f"| `{c.name}` | {c.kind} | {_cell(c.meaning)} |" for c in f.columns]
        out += ["", *([f"{f.then[0].upper()}{f.then[1:]}.", ""] if f.then else [])]
    return "\n".join(out).rstrip() + "\n"


def main() -> None:
    sys.stdout.write(reference())


if __name__ == "__main__":
    main()
