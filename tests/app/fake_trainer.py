"""A stand-in for `dtmr train` in the trainer-tab tests: prints progress events as JSON lines.

Usage: python fake_trainer.py train --out DIR --epochs A,B,C [--resume] [other dtmr train flags ignored].
Each stage runs its epochs of STEPS steps (FAKE_TRAINER_STEP_S seconds each); after each epoch it records
the finished stage/epoch in DIR/state.txt and copies FAKE_TRAINER_CHECKPOINT to DIR/model.pt, so
--resume continues after the last finished epoch, like the real trainer.
"""

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

from dtmr.train.progress import EventWriter

STEPS = 4


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("command")
    parser.add_argument("--out", required=True)
    parser.add_argument("--epochs", default="1,1,1")
    parser.add_argument("--resume", action="store_true")
    args, _unknown = parser.parse_known_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    state = out / "state.txt"
    done = tuple(map(int, state.read_text().split())) if args.resume and state.exists() else (0, 0)
    epochs = [int(e) for e in args.epochs.split(",")]
    step_s = float(os.environ.get("FAKE_TRAINER_STEP_S", "0.01"))
    writer = EventWriter(sys.stdout)
    print("a line that is not an event", flush=True)
    print("fake trainer starting", file=sys.stderr, flush=True)
    writer.emit("start", message="resumed" if args.resume else "fresh")
    total = sum(epochs) * STEPS
    count = 0
    for stage, stage_epochs in enumerate(epochs, start=1):
        writer.emit("stage", stage=stage, epochs=stage_epochs)
        for epoch in range(1, stage_epochs + 1):
            count += STEPS
            if (stage, epoch) <= done:
                continue
            for step in range(1, STEPS + 1):
                time.sleep(step_s)
                loss = 1.0 / (stage + epoch + step)
                writer.emit("step", stage=stage, epoch=epoch, epochs=stage_epochs, step=step, steps=STEPS,
                            losses={"total": loss, "mse": loss / 2}, samples_per_s=100.0 + step,
                            eta_s=(total - count) * step_s)
            writer.emit("epoch", stage=stage, epoch=epoch, epochs=stage_epochs, losses={"total": loss})
            checkpoint = out / "model.pt"
            shutil.copyfile(os.environ["FAKE_TRAINER_CHECKPOINT"], checkpoint)
            state.write_text(f"{stage} {epoch}")
            writer.emit("checkpoint", stage=stage, epoch=epoch, message=str(checkpoint))
    writer.emit("done", message="finished")
    return 0


if __name__ == "__main__":
    sys.exit(main())
