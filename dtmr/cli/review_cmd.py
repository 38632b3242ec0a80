"""`dtmr review export|merge`: the plausibility reviews the Studio writes beside a library (docs/review.md)."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import DtmrError


def register(subparsers) -> None:
    parser = subparsers.add_parser("review", help="export or merge plausibility reviews (LIB.review.*.json)",
                                   description="Plausibility reviews made in the Studio (docs/review.md).")
    sub = parser.add_subparsers(dest="review_command", metavar="ACTION", required=True)
    export = sub.add_parser("export", help="write the reviewed clips as CSV or JSON rows",
                            description="Write every reviewed clip (one row per annotator and clip) of a library's "
                                        "review sidecars, or of the given sidecar files, as CSV or JSON.")
    export.add_argument("sources", nargs="+", type=Path, metavar="LIB",
                        help="a library (its sidecars LIB.review.*.json are read) or sidecar files")
    export.add_argument("--format", choices=("csv", "json"), default=None,
                        help="default: from the output's extension (csv unless it ends in .json)")
    export.add_argument("-o", "--output", type=Path, required=True, metavar="OUT")
    export.add_argument("--overwrite", action="store_true",
                        help="replace OUT even if it is not a review export (never an input or a sidecar)")
    export.set_defaults(func=_export)
    merge = sub.add_parser("merge", help="merge several annotators' sidecars and print their agreement (kappa)",
                           description="Merge the sidecars of several annotators of one library and print Cohen's "
                                       "kappa for every pair (Fleiss' kappa too for three or more).")
    merge.add_argument("sidecars", nargs="+", type=Path, metavar="SIDECAR")
    merge.add_argument("-o", "--output", type=Path, default=None, metavar="OUT",
                       help="write the merged reviews and the agreement as JSON")
    merge.add_argument("--overwrite", action="store_true",
                       help="replace OUT even if it is not a merged review (never an input or a sidecar)")
    merge.set_defaults(func=_merge)


def _reviews(sources: list[Path]):
    """The reviews of `sources` and the sidecar files they were read from."""
    from ..review import find_sidecars, read_review

    paths: list[Path] = []
    for source in sources:
        if source.suffix == ".json" and source.is_file():
            paths.append(source)
            continue
        found = find_sidecars(source)
        if not found:
            what = "no review sidecar beside it" if source.exists() else "no such library or sidecar"
            raise DtmrError(f"{source}: {what} ({source.name}.review.<annotator>.json)")
        paths.extend(found)
    return [read_review(p) for p in paths], paths


def _export(args) -> int:
    from ..io.outputs import check_output
    from ..review import write_csv, write_json

    fmt = args.format or ("json" if args.output.suffix.lower() == ".json" else "csv")
    reviews, paths = _reviews(args.sources)
    check_output(args.output, kind="review-rows", inputs=[*args.sources, *paths], overwrite=args.overwrite)
    rows = (write_json if fmt == "json" else write_csv)(args.output, reviews)
    print(f"{args.output}: {rows} reviewed clips from {len(reviews)} annotator(s)")
    return 0


def _merge(args) -> int:
    from ..io.atomic import atomic_write
    from ..io.outputs import check_output
    from ..review import merge_reviews, read_review

    if args.output is not None:
        check_output(args.output, kind="review-merge", inputs=args.sidecars, overwrite=args.overwrite)
    reviews = [read_review(p) for p in args.sidecars]
    merged, agreement = merge_reviews(reviews)
    for line in agreement.lines():
        print(line)
    if args.output is not None:
        data = {"format": "dtmr-review-merge", "version": 2, "library": reviews[0].library.name,
                "annotators": list(agreement.annotators), "agreement": agreement.as_json(), "clips": merged}
        with atomic_write(args.output, ".json.tmp") as tmp:
            tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{args.output}: {len(merged)} clips")
    return 0
