"""CPU time of the CSV prediction readers on one dump, in one process.

    PYTHONPATH=python python benches/bench_csv_readers.py FILE.csv [--repeats 3]

Times ``toxeval.predictions.readers.read_csv_table`` (the table toxeval uses) with the
native reader allowed and with ``TOXEVAL_CSV_READER=pyarrow`` (``pyarrow.csv.read_csv``),
alternated, median of ``--repeats`` runs each, CPU seconds of all threads of this
process and file MiB per CPU second. A dump of the common form (header, ``id``, one
unquoted column of numbers per category) can be made from the Parquet dump of
``bench_end_to_end.py`` with ``--from-parquet P.parquet`` (written to FILE first).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path


def _write_from_parquet(src: Path, dst: Path) -> None:
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    t = pq.read_table(src)
    cols: dict[str, pa.Array] = {"id": t.column("id")}
    scores = t.column("scores").combine_chunks()
    for i, f in enumerate(scores.type):
        cols[f.name] = scores.field(i)
    # no quotes anywhere (pyarrow quotes the header's names even with quoting "none")
    header = ",".join(cols).encode() + b"\n"
    body = pa.BufferOutputStream()
    pcsv.write_csv(
        pa.table(cols), body, pcsv.WriteOptions(include_header=False, quoting_style="none")
    )
    dst.write_bytes(header + body.getvalue().to_pybytes())


def main(argv: list[str] | None = None) -> int:
    from toxeval.predictions.native_csv import CSV_READER_ENV
    from toxeval.predictions.readers import read_csv_table

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file", type=Path)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--from-parquet", type=Path, default=None)
    args = p.parse_args(argv)
    if args.from_parquet is not None:
        _write_from_parquet(args.from_parquet, args.file)
    mib = args.file.stat().st_size / 2**20
    cpus: dict[str, list[float]] = {"native": [], "pyarrow": []}
    for _ in range(args.repeats):
        for mode in cpus:
            os.environ[CSV_READER_ENV] = "auto" if mode == "native" else "pyarrow"
            c = time.process_time()
            read_csv_table(args.file)
            cpus[mode].append(time.process_time() - c)
    print(f"{args.file}: {mib:.1f} MiB, median of {args.repeats}, load {os.getloadavg()[0]:.1f}")
    print("| reader | CPU s | MiB per CPU s |")
    print("|---|---|---|")
    for mode, runs in cpus.items():
        cpu = statistics.median(runs)
        print(f"| {mode} | {cpu:.2f} | {mib / cpu:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
