"""``ozlab power``: participants needed per system for an effect size
(``analytics.statistics.power``)."""

from __future__ import annotations

import argparse

from bot.cli.arguments import positive, probability
from bot.cli.flags import STUDY_ID

NAME = "power"


def add(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    power = commands.add_parser(
        NAME, help="participants needed per system for an effect size (pingouin's power tests)"
    )
    power.add_argument(
        "study",
        help="a shipped study's name, a study YAML file, or a study database (which adds the "
        "smallest effect its participants so far could detect)",
    )
    power.add_argument(
        "--effect",
        type=positive,
        help="Cohen's d for two systems (d_z within), Cohen's f for more; "
        "default 0.5 or 0.25 (Cohen's medium)",
    )
    power.add_argument("--alpha", type=probability, default=0.05, help="default 0.05")
    power.add_argument("--power", type=probability, default=0.8, help="default 0.8")
    power.add_argument(
        "--corr",
        type=float,
        default=0.5,
        help="within participants, 3+ systems: correlation between a participant's measures "
        "(default 0.5, as G*Power)",
    )
    power.add_argument("--study", dest="study_id", help=f"with a database: {STUDY_ID}")


def run(args: argparse.Namespace) -> int:
    from analytics.statistics.power import power_report

    print(
        power_report(
            args.study,
            effect=args.effect,
            alpha=args.alpha,
            power=args.power,
            corr=args.corr,
            study=args.study_id,
        ),
        end="",
    )
    return 0
