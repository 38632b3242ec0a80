"""dtmr/argtypes.py: the argument types the CLI, the benchmarks and the Studio share."""

import argparse

import pytest

from dtmr.argtypes import positive_float, positive_int


def test_positive_numbers_refuse_zero_negatives_nan_infinity_and_words():
    assert positive_int("3") == 3 and positive_float("0.5") == 0.5 and positive_float("30") == 30.0
    for parse, text in ((positive_int, "0"), (positive_int, "x"), (positive_float, "0"), (positive_float, "-1"),
                        (positive_float, "nan"), (positive_float, "inf"), (positive_float, "fast")):
        with pytest.raises(argparse.ArgumentTypeError):
            parse(text)
