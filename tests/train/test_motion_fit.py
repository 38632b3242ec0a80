"""`dtmr.train.motion_fit`: the one fitting function of `dtmr fit-motion-model` and the Studio's "Fit k-same on
this library" — the whole library when no split applies, a cancel between steps, the file "fitted on" the library."""

import pytest

from dtmr.data.label_set import LabelSet
from dtmr.data.synthetic import generate_clips
from dtmr.errors import DtmrError
from dtmr.methods import DTMR
from dtmr.io.library import ClipLibrary
from dtmr.io.sources import open_clip_source
from dtmr.models.checkpoints.data_fit import data_fit
from dtmr.models.checkpoints.header import read_checkpoint_header
from dtmr.train.motion_fit import MotionFitSettings, fit_motion_checkpoint


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "tiny.h5"
    ClipLibrary.create(path, generate_clips(subjects=3, actions=2, repetitions=2, seed=0)).close()
    return path


def library_labels(path) -> LabelSet:
    source = open_clip_source(path)
    try:
        return LabelSet.of_source(source)
    finally:
        source.close()


def test_a_split_fits_its_training_half_and_the_file_is_fitted_on_the_library(library, tmp_path):
    fit = fit_motion_checkpoint(library, "synthetic", MotionFitSettings("ksame", k=2), tmp_path / "k.pt")
    assert (fit.train_clips, fit.test_clips, fit.metrics["pool_clips"]) == (6, 6, 6)
    assert fit.summary.startswith("ksame k=2, 2 action templates, pool of 6 clips by 3 subjects; nearest template")
    assert data_fit(read_checkpoint_header(fit.path), library_labels(library)).line == "fitted on this library"


def test_without_a_split_every_clip_is_fitted(library, tmp_path):
    fit = fit_motion_checkpoint(library, None, MotionFitSettings("retime"), tmp_path / "r.pt")
    assert (fit.train_clips, fit.test_clips, fit.split) == (12, 0, None)
    assert "nearest_template_accuracy" not in fit.metrics and "test clips" not in fit.summary
    assert read_checkpoint_header(fit.path).trained_on.same_data_set(library_labels(library))


def test_a_cancel_between_steps_writes_nothing(library, tmp_path):
    class Stop(Exception):
        pass

    def stop():
        raise Stop

    with pytest.raises(Stop):
        fit_motion_checkpoint(library, "synthetic", MotionFitSettings("ksame"), tmp_path / "k.pt", check=stop)
    assert not (tmp_path / "k.pt").exists()


def test_a_method_that_is_not_fitted_is_refused(library, tmp_path):
    with pytest.raises(DtmrError, match=f"{DTMR.name!r} is not fitted on a library"):
        fit_motion_checkpoint(library, "synthetic", MotionFitSettings(DTMR.name), tmp_path / "x.pt")
