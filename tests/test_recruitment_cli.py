"""``ozlab invite`` and ``ozlab export payments`` as a researcher types them."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from bot.cli import main
from bot.core.privacy import SECRET_ENV
from bot.core.vocabulary import Invitation
from tests.store_reads import reading


def test_invite_makes_single_use_deep_links_and_a_csv(tmp_path: Path) -> None:
    db, out = tmp_path / "study.sqlite", tmp_path / "invitations.csv"
    assert (
        main(["invite", "--db", str(db), "--n", "5", "--bot", "@ozlab_lab_bot", "--out", str(out)])
        == 0
    )
    with out.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len({row["code"] for row in rows}) == 5
    for row in rows:
        assert row["link"] == f"https://t.me/ozlab_lab_bot?start={row['code']}"
        assert len(row["code"]) == 10 and row["code"].isalnum()
    found = reading(db, lambda store: store.check_invitation(rows[0]["code"], "p1"))
    assert found is Invitation.FREE


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--n", "3", "--bot", "not a bot"], "is not a Telegram bot username"),
        # --n 0 is argparse's usage error (status 2): tests/test_cli_stops.py
    ],
)
def test_invite_refuses_what_it_cannot_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], said: str
) -> None:
    status = main(["invite", "--db", str(tmp_path / "s.sqlite"), *arguments])
    assert status == 3 and said in capsys.readouterr().err


def test_invite_never_overwrites_a_list_handed_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "invitations.csv"
    out.write_text("code,link\n")
    status = main(
        [
            "invite",
            "--db",
            str(tmp_path / "s.sqlite"),
            "--n",
            "2",
            "--bot",
            "lab_bot",
            "--out",
            str(out),
        ]
    )
    assert status == 3 and "exists already" in capsys.readouterr().err
    assert not (tmp_path / "s.sqlite").exists()


def test_export_payments_needs_the_secret_the_study_ran_with(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "study.sqlite"
    assert (
        main(
            [
                "invite",
                "--db",
                str(db),
                "--n",
                "1",
                "--bot",
                "lab_bot",
                "--out",
                str(tmp_path / "i.csv"),
            ]
        )
        == 0
    )
    monkeypatch.delenv(SECRET_ENV, raising=False)
    assert main(["export", "payments", "--db", str(db)]) == 3
    assert SECRET_ENV in capsys.readouterr().err
    monkeypatch.setenv(SECRET_ENV, "a-secret-long-enough-for-ozlab")
    assert main(["export", "payments", "--db", str(db)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "study,platform,platform_id,status,minutes,arrived_at,last_active_at,submission_id,"
        "platform_status,approved_at,bonus,bonus_paid_at,bonus_bulk_ids,job"
    ]
