"""`dtmr model summary`: parameter counts of DisentangledTMR per component, against the paper's."""

from __future__ import annotations

import argparse
import json

#: the published sizes (../seeds/001 "Loss & Training"), NTU-25
PAPER_SIZES = {"total": 22.7e6, "action_encoder": 4.9e6, "mixformer": 2.3e6, "identity_encoder": 0.8e6,
               "decoder": 17.0e6}
_LABELS = {"action_encoder": "action encoder", "mixformer": "  MixFormer branch",
           "identity_encoder": "identity encoder",
           "decoder": "decoder", "total": "total"}


def register(subparsers) -> None:
    parser = subparsers.add_parser("model", help="inspect the DisentangledTMR model")
    commands = parser.add_subparsers(dest="model_command", metavar="ACTION", required=True)
    summary = commands.add_parser("summary", help="parameter counts per component")
    summary.add_argument("--preset", default="paper", choices=("paper", "small"))
    summary.add_argument("--topology", default="ntu25", help="joint set the model is built for (default ntu25)")
    summary.add_argument("--json", action="store_true", help="print one JSON object")
    summary.set_defaults(func=_summary)


def model_summary(preset: str, topology: str) -> dict:
    """{"preset", "topology", "num_joints", "total", "action_encoder", "mixformer", "identity_encoder", "decoder"}."""
    from ..models import DisentangledTMR, DTMRConfig

    config = DTMRConfig.preset(preset, topology)
    model = DisentangledTMR(config)
    return {"preset": preset, "topology": config.topology, "num_joints": config.num_joints,
            **model.parameter_counts()}


def _summary(args: argparse.Namespace) -> int:
    from ..errors import DtmrError

    try:
        summary = model_summary(args.preset, args.topology)
    except KeyError as exc:
        raise DtmrError(exc.args[0]) from None
    if args.json:
        print(json.dumps(summary))
        return 0
    print(f"DisentangledTMR, preset {summary['preset']}, topology {summary['topology']} "
          f"({summary['num_joints']} joints)")
    paper = args.preset == "paper" and summary["topology"] == "ntu25"
    print(f"{'component':<20} {'parameters':>12}" + (f" {'paper':>7} {'diff':>7}" if paper else ""))
    for key in ("action_encoder", "mixformer", "identity_encoder", "decoder", "total"):
        line = f"{_LABELS[key]:<20} {summary[key]:>12,}"
        if paper:
            line += f" {PAPER_SIZES[key] / 1e6:>6.1f}M {100 * (summary[key] / PAPER_SIZES[key] - 1):>+6.1f}%"
        print(line)
    return 0
