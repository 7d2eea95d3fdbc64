"""Time and peak memory of ``analytics report --format json`` on a large synthetic study,
beside the floor: pandas alone reading the same tables, from SQLite and from PostgreSQL;
first, a small study's report in every format beside the time its libraries take to import.

    python bench/report.py                      # 10,000 sessions, 1,000,000 answers
    python bench/report.py --sessions 1000 --responses-per-session 100
    python bench/report.py --postgresql postgresql://me@dbhost/scratch
    python bench/report.py --no-postgresql      # SQLite alone
    python bench/report.py --small-only --rounds 7
    python bench/report.py --small-only --busy 2  # on a machine busy with two other processes
    python bench/report.py --small-only --systems 2  # an A/B study

The small study (25 participants, as a pilot or a class project has) measures the fixed
cost of a report: each format's whole command (``ozlab report --format F --out ...``, the
interpreter's start included) beside a process that only imports pandas, scipy,
matplotlib and pingouin, the floor of any report. The two alternate, round after round,
and each figure is the median of its rounds: on a shared machine the load changes by the
minute, and alternating keeps it alike for both sides of a ratio. ``--busy N`` keeps N other
processes computing meanwhile, as on a shared machine (where a report's BLAS threads once
made its statistics ten times slower).

Each measurement runs in its own Python process (peak RSS is per process: ``ru_maxrss``),
with a time limit, so the benchmark is bounded and stops by itself. The database is
written by ``analytics.data.synthetic`` into a temporary folder and removed afterwards.
The PostgreSQL run copies it (``ozlab copy``) into a throw-away server of the tests
(``tests/postgres_server.py``), or into the database ``--postgresql`` names, which must not
keep the study yet (credentials from libpq's environment, as ozlab takes them). It has two
floors: ``pandas.read_sql`` on a psycopg connection (rows through DB-API, as SQLite's floor
reads through ``sqlite3``), and on an ADBC PostgreSQL connection (Arrow from the server's
binary COPY, pandas' fastest way to read a server). The two backends' reports must be the
same but for their "source" line: every number unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT_S = 900  # per measurement

FLOOR = """
import json, resource, sqlite3, sys, time
started = time.perf_counter()
import pandas as pd
imported = time.perf_counter()
conn = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
rows = {t: len(pd.read_sql_query(f"SELECT * FROM {t}", conn))
        for t in ("participants", "sessions", "exchanges", "responses", "events", "studies")}
conn.close()
done = time.perf_counter()
print(json.dumps({"seconds": done - started, "import_s": imported - started,
                  "work_s": done - imported, "rss_mb": resource.getrusage(
                  resource.RUSAGE_SELF).ru_maxrss / 1024, "rows": rows}))
"""

REPORT = """
import io, json, resource, sys, time
started = time.perf_counter()
from analytics.data.loading import load_study_data
from analytics.report.numbers import build_report
from analytics.report.render_json import render_json
imported = time.perf_counter()
data = load_study_data(sys.argv[1])
loaded = time.perf_counter()
report = build_report(data)
built = time.perf_counter()
text = render_json(report)
done = time.perf_counter()
print(json.dumps({"seconds": done - started, "import_s": imported - started,
                  "load_s": loaded - imported, "build_s": built - loaded,
                  "json_s": done - built, "json_mb": len(text.encode()) / 2**20,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

PG_FLOOR = """
import json, resource, sys, time, warnings
started = time.perf_counter()
import pandas as pd
if sys.argv[3] == "adbc":
    import adbc_driver_postgresql.dbapi as driver
else:
    import psycopg as driver
    warnings.simplefilter("ignore", UserWarning)  # pandas prefers SQLAlchemy: rows all the same
imported = time.perf_counter()
conn = driver.connect(sys.argv[1])
rows = {t: len(pd.read_sql(f'SELECT * FROM "{sys.argv[2]}".{t}', conn))
        for t in ("participants", "sessions", "exchanges", "responses", "events", "studies")}
conn.close()
done = time.perf_counter()
print(json.dumps({"seconds": done - started, "import_s": imported - started,
                  "work_s": done - imported, "rss_mb": resource.getrusage(
                  resource.RUSAGE_SELF).ru_maxrss / 1024, "rows": rows}))
"""

CLI = """
import json, resource, sys, time
from bot.cli import analytics_main as main
started = time.perf_counter()
code = main(["report", "--db", sys.argv[1], "--format", "json", "--out", sys.argv[2]])
print(json.dumps({"seconds": time.perf_counter() - started, "code": code,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


SMALL_SESSIONS = 50  # two tasks each: 25 participants (and one who never started)
FORMATS = ("terminal", "md", "html", "tex", "json")
TARGET = {"terminal": 1.25, "md": 1.25, "html": 2.0, "tex": 2.0, "json": 1.25}
"""The most a small study's report may take, in times the import of its libraries."""
LIBRARIES = "import pandas, scipy, matplotlib, pingouin"


def seconds_of(argv: list[str]) -> tuple[float, float]:
    """The wall-clock seconds of one process, from its start to its end, and its CPU
    seconds (user and system: what the load of a shared machine does not lengthen)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=LIMIT_S)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"measurement failed: {' '.join(argv)}\n{done.stderr[-2000:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu


BUSY = "while True: pass"
"""What each of ``--busy``'s other processes does: compute, on one core each."""


def small_study(folder: Path, rounds: int, seed: int, busy: int = 0, systems: int = 3) -> None:
    """Each format's whole report command on a small study of ``systems`` systems, beside
    the libraries' import, with ``busy`` other processes computing meanwhile."""
    from statistics import median

    from analytics.data.synthetic import write_synthetic_study

    db = folder / "small.sqlite"
    study = write_synthetic_study(
        db, sessions=SMALL_SESSIONS, responses_per_session=20, seed=seed, systems=systems
    )
    print(
        f"Small study: {systems} systems, {study.participants} participants, {study.sessions}"
        " sessions,"
        f" {study.responses:,} responses; {rounds} rounds, medians"
        + (f"; {busy} other processes computing meanwhile" if busy else "")
        + "\n"
    )
    runs: dict[str, list[tuple[float, float]]] = {"floor": []}
    others = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(busy)]
    try:
        for _ in range(rounds):
            runs["floor"].append(seconds_of([sys.executable, "-c", LIBRARIES]))
            for fmt in FORMATS:
                out = folder / f"small.{'txt' if fmt == 'terminal' else fmt}"
                command = ["-m", "bot.cli", "report", "--db", str(db), "--format", fmt]
                runs.setdefault(fmt, []).append(
                    seconds_of([sys.executable, *command, "--out", str(out)])
                )
    finally:
        for other in others:
            other.kill()
            other.wait()
    wall, cpu = ({name: median(r[i] for r in taken) for name, taken in runs.items()}
                 for i in (0, 1))  # fmt: skip
    rows = [("importing pandas, scipy, matplotlib and pingouin (floor)", "floor", "")]
    rows += [(f"ozlab report --format {fmt} (whole command)", fmt, f"≤ {TARGET[fmt]:.2f}×")
             for fmt in FORMATS]  # fmt: skip
    width = max(len(name) for name, *_ in rows)
    print(f"{'Small study':{width}}  {'time':>9}  {'ratio':>6}  {'CPU':>9}  {'ratio':>6}  target")
    for name, key, target in rows:
        ratios = [f"{d[key] / d['floor']:5.2f}×" if key != "floor" else "" for d in (wall, cpu)]
        print(f"{name:{width}}  {wall[key]:7.2f} s  {ratios[0]:>6}  {cpu[key]:7.2f} s"
              f"  {ratios[1]:>6}  {target}")  # fmt: skip
    print()


def measure(code: str, *args: str) -> dict:
    """Run ``code`` in a fresh interpreter; its last output line is a JSON result."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=LIMIT_S,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"measurement failed:\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_s"] = time.perf_counter() - started
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--responses-per-session", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=5, help="of the small study (medians)")
    parser.add_argument("--small-only", action="store_true", help="the small study alone")
    parser.add_argument(
        "--busy", type=int, default=0, metavar="N", help="N other processes computing meanwhile"
    )
    parser.add_argument(
        "--systems", type=int, default=3, help="of the small study (2: its tests are t tests)"
    )
    place = parser.add_mutually_exclusive_group()
    place.add_argument("--postgresql", metavar="URL", help="a database to copy the study into")
    place.add_argument("--no-postgresql", action="store_true", help="measure SQLite alone")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1750000000")  # the reports compared line by line
    from analytics.data.synthetic import write_synthetic_study

    with tempfile.TemporaryDirectory(prefix="ozlab-bench-") as folder:
        small_study(Path(folder), args.rounds, args.seed, args.busy, args.systems)
        if args.small_only:
            return 0
        db = Path(folder) / "study.sqlite"
        started = time.perf_counter()
        study = write_synthetic_study(
            db,
            sessions=args.sessions,
            responses_per_session=args.responses_per_session,
            seed=args.seed,
            systems=3,
        )
        written = time.perf_counter() - started
        size_mb = db.stat().st_size / 2**20
        print(
            f"Synthetic study: {study.participants:,} participants, {study.sessions:,} sessions, "
            f"{study.exchanges:,} exchanges, {study.responses:,} responses, {study.events:,} "
            f"events; {size_mb:.0f} MB, written in {written:.1f} s\n"
        )
        out = Path(folder) / "report.json"
        floor = measure(FLOOR, str(db))
        phases = measure(REPORT, str(db))
        cli = measure(CLI, str(db), str(out))
        show("SQLite", floor, phases, cli)
        if not args.no_postgresql:
            on_server(db, out, args.postgresql, Path(folder))
    return 0


def show(backend: str, floor: dict, phases: dict, cli: dict) -> None:
    rows = [
        ("pandas alone: read_sql of every table (floor)", floor["seconds"], floor["rss_mb"]),
        ("  of which importing pandas", floor["import_s"], None),
        ("report in-process: imports, load, statistics, JSON", phases["seconds"], phases["rss_mb"]),
        ("  importing analytics (pandas, scipy, pyarrow)", phases["import_s"], None),
        ("  load_study_data (one read-only snapshot)", phases["load_s"], None),
        ("  build_report (every table and test)", phases["build_s"], None),
        (f"  render_json ({phases['json_mb']:.1f} MB)", phases["json_s"], None),
        ("analytics report --format json --out (whole command)", cli["seconds"], cli["rss_mb"]),
    ]  # fmt: skip
    width = max(len(name) for name, _, _ in rows)
    print(f"{backend:{width}}  {'time':>9}  {'peak RSS':>9}")
    for name, seconds, rss in rows:
        memory = f"{rss:7.0f} MB" if rss is not None else ""
        print(f"{name:{width}}  {seconds:7.2f} s  {memory:>9}")
    ratio = cli["seconds"] / floor["seconds"]
    print(f"\nThe whole report takes {ratio:.2f}× the time pandas needs just to read the tables.\n")


def on_server(db: Path, sqlite_report: Path, url: str | None, folder: Path) -> None:
    """The same study copied to PostgreSQL, measured as on SQLite; its report compared."""
    import sqlite3

    from tests.postgres_server import PostgresServer

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        [(study,)] = conn.execute("SELECT DISTINCT study_id FROM studies").fetchall()
    finally:
        conn.close()
    server = None
    if url is None:
        server = PostgresServer(fsync=False)
        server.start()
        url = server.fresh_database()
    try:
        started = time.perf_counter()
        copy = [sys.executable, "-m", "bot.cli", "copy", "--db", str(db), "--to", url]
        done = subprocess.run(copy, cwd=ROOT, capture_output=True, text=True, timeout=LIMIT_S)
        if done.returncode != 0:
            raise SystemExit(f"ozlab copy failed:\n{done.stderr[-2000:]}")
        print(f"Copied to PostgreSQL in {time.perf_counter() - started:.1f} s\n")
        settled(url)
        target = f"{url}{'&' if '?' in url else '?'}study={study}"
        out = folder / "report-postgresql.json"
        floor = measure(PG_FLOOR, url, str(study), "psycopg")
        columnar = measure(PG_FLOOR, url, str(study), "adbc")
        phases = measure(REPORT, target)
        cli = measure(CLI, target, str(out))
    finally:
        if server is not None:
            server.stop()
    show("PostgreSQL (floor: pandas on psycopg)", floor, phases, cli)
    print(
        f"pandas alone on an ADBC connection: {columnar['seconds']:.2f} s,"
        f" {columnar['rss_mb']:.0f} MB; the whole report takes"
        f" {cli['seconds'] / columnar['seconds']:.2f}× that.\n"
    )
    kept = [_numbers(path) for path in (sqlite_report, out)]
    print("Every number of the report unchanged:", "yes" if kept[0] == kept[1] else "NO")


def settled(url: str) -> None:
    """The copied tables vacuumed and analysed, as autovacuum leaves them a minute after a
    load: else it does so during the measurements, on the same two cores."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")


def _numbers(report: Path) -> list[str]:
    """The report's lines but the one naming its database."""
    return [line for line in report.read_text().splitlines() if not line.startswith(' "source"')]


if __name__ == "__main__":
    sys.exit(main())
