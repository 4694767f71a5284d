import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from labutil import units, validate


def test_gb_gib_roundtrip_and_known_values():
    assert units.gb_to_gib(80) == pytest.approx(74.506, rel=1e-4)  # an "80 GB" H100 shows ~79.6 GiB usable; raw 80e9 B = 74.5 GiB
    assert units.gib_to_gb(1) == pytest.approx(1.073741824)
    assert units.gbps_to_gbs(400) == 50.0  # NDR 400 Gbit/s = 50 GB/s
    assert units.gbs_to_gbps(50.0) == 400.0


@given(st.floats(min_value=0, max_value=1e15, allow_nan=False))
def test_roundtrips(x):
    assert units.gib_to_gb(units.gb_to_gib(x)) == pytest.approx(x, rel=1e-12, abs=1e-9)
    assert units.gbs_to_gbps(units.gbps_to_gbs(x)) == pytest.approx(x, rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("text,expected", [("8", 8), ("128K", 131072), ("64M", 64 * 2**20), ("1G", 2**30),
                                            ("2g", 2 * 2**30), ("16MB", 16 * 2**20)])
def test_parse_size_like_nccl_tests(text, expected):
    assert units.parse_size(text) == expected


@pytest.mark.parametrize("bad", ["", "abc", "-5", "1X", "nan"])
def test_parse_size_rejects(bad):
    with pytest.raises(ValueError, match="size"):
        units.parse_size(bad)


def test_positive_names_parameter_and_range():
    with pytest.raises(ValueError, match=r"n_gpus must be > 0; got 0"):
        validate.positive("n_gpus", 0)
    with pytest.raises(ValueError, match="must not be NaN"):
        validate.positive("x", float("nan"))
    with pytest.raises(ValueError, match="finite"):
        validate.positive("x", math.inf)
    assert validate.positive("x", 0, allow_zero=True) == 0.0


def test_arrays_are_checked_elementwise():
    arr = validate.positive("sizes", [1, 2, 3])
    assert isinstance(arr, np.ndarray) and arr.dtype == float
    with pytest.raises(ValueError, match=r"sizes must be > 0; got -1"):
        validate.positive("sizes", [1, -1, 3])
    with pytest.raises(ValueError, match="NaN"):
        validate.positive("sizes", np.array([1.0, np.nan]))


def test_integer_and_fraction_and_choice():
    assert validate.integer("tp", 8) == 8 and isinstance(validate.integer("tp", 8.0), int)
    with pytest.raises(ValueError, match=r"tp must be an integer >= 1"):
        validate.integer("tp", 2.5)
    with pytest.raises(ValueError, match=r"zero_stage must be an integer in \[0, 3\]"):
        validate.integer("zero_stage", 4, lo=0, hi=3)
    with pytest.raises(ValueError, match=r"mfu must be in \(0, 1\]"):
        validate.fraction("mfu", 1.2)
    with pytest.raises(ValueError, match=r"algo must be one of \['ring', 'tree'\]"):
        validate.choice("algo", "mesh", ["ring", "tree"])
    with pytest.raises(ValueError, match="bool"):
        validate.integer("n", True)


def test_unknown_name_lists_closest():
    err = validate.unknown_name("gpu", "H10", ["H100-SXM", "A100-80G-SXM", "L4"])
    assert isinstance(err, KeyError) and "H100-SXM" in str(err)


@pytest.mark.parametrize("bad", ["12", b"12", True, np.bool_(False), ["1", 2], np.array(["1.0"]), np.array([1, "2"], dtype=object)])
def test_strings_and_bools_are_not_numbers(bad):
    # numpy would read "12" as 12.0: the validator must not (issue 8)
    for check in (lambda v: validate.positive("x", v), lambda v: validate.number("x", v),
                  lambda v: validate.integer("n", v), lambda v: validate.fraction("f", v)):
        with pytest.raises(TypeError):
            check(bad)
        with pytest.raises(ValueError):  # ArgumentTypeError is both
            check(bad)


def test_models_reject_strings_through_the_validator():
    from labutil import comm, compute, cost, dataloading

    with pytest.raises(TypeError, match="string"):
        comm.collective_time_s("all_reduce", "1e9", 8, 50.0)
    with pytest.raises(TypeError, match="string"):
        compute.train_flops("7e9", 1e12)
    with pytest.raises(TypeError):
        compute.train_flops(True, 1e12)
    with pytest.raises(ValueError, match="hardware_usd"):
        cost.opex_per_year(64, hardware_usd=float("nan"))
    with pytest.raises(TypeError, match="string"):
        dataloading.llm_tokens_per_s_per_gpu(7e9, "989", 0.4)


@pytest.mark.parametrize("huge", [10**400, -10**400, [1.0, 10**400], np.array([10**400], dtype=object)])
def test_huge_ints_are_a_value_error_not_an_overflow(huge):
    """float(10**400) raises OverflowError; a validator must turn it into the ValueError it promises,
    naming the parameter and not echoing all 400 digits."""
    for check in (lambda v: validate.positive("x", v), lambda v: validate.number("x", v),
                  lambda v: validate.integer("n", v), lambda v: validate.fraction("f", v)):
        with pytest.raises(ValueError) as e:
            check(huge)
        assert not isinstance(e.value, OverflowError)
        assert "must be a finite number" in str(e.value) and len(str(e.value)) < 160


@pytest.mark.parametrize("bad", [float("inf"), -float("inf"), np.inf, [1.0, np.inf]])
def test_infinity_is_refused_by_every_check(bad):
    for check in (lambda v: validate.positive("x", v), lambda v: validate.number("x", v),
                  lambda v: validate.integer("n", v), lambda v: validate.fraction("f", v)):
        with pytest.raises(ValueError):
            check(bad)


def test_integer_arrays_beyond_int64_are_refused_not_wrapped():
    assert validate.integer("n", 2**64) == 2**64                               # a Python int stays exact
    with pytest.raises(ValueError, match="int64"):
        validate.integer("n", [1, 2**64])                                     # astype(int64) would wrap


@pytest.mark.parametrize("bad", ["12", b"12", True, np.bool_(True)])
def test_unit_conversions_refuse_strings_and_bools(bad):
    """'12' * 8 is '1212121212121212': a conversion must refuse it (issue 18, R11)."""
    for fn in (units.gbs_to_gbps, units.gbps_to_gbs, units.gb_to_gib, units.gib_to_gb, units.bytes_to_gb,
               units.gb_to_bytes, units.tflops_to_flops, units.flops_to_tflops, units.s_to_days, units.days_to_s):
        with pytest.raises(TypeError):
            fn(bad)
        with pytest.raises(ValueError):
            fn(bad)
    assert units.gbs_to_gbps(12) == 96 and list(units.gbps_to_gbs(np.array([400.0, 200.0]))) == [50.0, 25.0]


@pytest.mark.parametrize("bad", [float("inf"), float("nan"), 10**400, "1G", True])
def test_format_bytes_refuses_non_finite_values(bad):
    with pytest.raises(ValueError):
        units.format_bytes(bad)
    assert units.format_bytes(128 * 2**20) == "128 MiB" and units.format_bytes(1536) == "1.5 KiB"
