"""labutil.sharing: MIG slice arithmetic and placement, sharing plans, isolation matrix, parsers."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labutil import inference, sharing as S
from labutil.parsers import ParseError

GPUS = ("A100-80GB", "H100-80GB")


# -- profile data (MIG User Guide, Supported MIG Profiles tables) --------------------------------
@pytest.mark.parametrize("gpu", GPUS)
def test_profile_slices_and_instance_counts(gpu):
    g = S.mig_gpu(gpu)
    assert (g.compute_slices, g.memory_slices) == (7, 8)
    expect = {"1g.10gb": (1, 1, 7), "1g.20gb": (1, 2, 4), "2g.20gb": (2, 2, 3), "3g.40gb": (3, 4, 2),
              "4g.40gb": (4, 4, 1), "7g.80gb": (7, 8, 1)}
    for name, (c, m, n) in expect.items():
        p = g.profile(name)
        assert (p.compute_slices, p.memory_slices, p.max_instances) == (c, m, n)
        # the name's "Ng" is the compute slices; its memory is ~ memory_slices x 10 GB
        assert int(name[0]) == p.compute_slices
        assert p.memory_gb == pytest.approx(10.0 * p.memory_slices, rel=0.07)
        # the placement search agrees with the guide's instance count
        assert S.max_instances_per_gpu(gpu, name) == n
    assert g.profile("19").name == "1g.10gb" and g.profile("MIG 3g.40gb").id == 9


def test_sm_counts_lgip():
    # nvidia-smi mig -lgip: A100-80GB 7g = 98 SMs of 108; H100 7g = 132 of 132
    assert S.mig_profile("A100-80GB", "7g.80gb").sm == 98 and S.mig_gpu("A100-80GB").sm_full == 108
    assert S.mig_gpu("H100-80GB").sm_fraction("7g.80gb") == 1.0
    # seven 1g instances hold fewer SMs than one 7g on H100 (7 x 16 = 112 < 132)
    assert 7 * S.mig_profile("H100-80GB", "1g.10gb").sm == 112


# -- placement ----------------------------------------------------------------------------------
@pytest.mark.parametrize("gpu", GPUS)
@pytest.mark.parametrize("combo", [["7g.80gb"], ["3g.40gb", "3g.40gb"], ["4g.40gb", "3g.40gb"], ["1g.10gb"] * 7,
                                   ["2g.20gb"] * 3 + ["1g.10gb"], ["4g.40gb", "2g.20gb", "1g.10gb"],
                                   ["1g.20gb"] * 4, ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]])
def test_valid_combinations(gpu, combo):
    lay = S.mig_layout(gpu, combo)
    assert lay.compute_slices <= 7 and lay.memory_slices <= 8
    used = 0
    for slot in lay.slots:  # no overlap on the memory axis, every start from -lgipp
        mask = ((1 << slot.memory_slices) - 1) << slot.start
        assert not used & mask
        used |= mask
        assert slot.start in S.mig_profile(gpu, slot.profile).placements


def test_search_finds_the_non_greedy_layout():
    # 3g+2g+1g+1g fits only with the 3g at slice 4 (a left-to-right fill would put it at 0)
    lay = S.mig_layout("A100-80GB", "3g.40gb,2g.20gb,1g.10gb,1g.10gb")
    assert [s.start for s in lay.slots if s.profile == "3g.40gb"] == [4]
    assert lay.cgi_argument() == "9,14,19,19"


@pytest.mark.parametrize("combo, rule", [(["3g.40gb", "3g.40gb", "1g.10gb"], "memory slices"),
                                         (["1g.10gb"] * 8, "at most 7"),
                                         (["4g.40gb", "4g.40gb"], "at most 1"),
                                         (["7g.80gb", "1g.10gb"], "compute slices"),
                                         (["1g.10gb+me", "1g.10gb+me"], "at most 1"),
                                         (["4g.40gb", "2g.20gb", "2g.20gb"], "compute slices"),
                                         (["2g.20gb"] * 3 + ["1g.20gb"] + ["1g.10gb"], "slices")])
def test_invalid_combinations_rejected(combo, rule):
    with pytest.raises(S.MigPlacementError, match=rule):
        S.mig_layout("H100-80GB", combo)
    assert not S.mig_fits("H100-80GB", combo)


@pytest.mark.parametrize("gpu", GPUS)
def test_counting_rules_and_placement_search_agree(gpu):
    # For the 80 GB A100/H100 geometries every multiset that passes the instance and slice counts
    # has a placement (found by the search, not always by a left-to-right fill); the layout's
    # starts always come from -lgipp.
    import itertools
    profs = S.mig_profiles(gpu)
    n_ok = 0
    for r in range(1, 8):
        for c in itertools.combinations_with_replacement(profs, r):
            counts_ok = (sum(p.compute_slices for p in c) <= 7 and sum(p.memory_slices for p in c) <= 8
                         and all(sum(q.name == p.name for q in c) <= p.max_instances for p in c))
            assert S.mig_fits(gpu, [p.name for p in c]) == counts_ok
            n_ok += counts_ok
    assert n_ok == len(S.mig_configurations(gpu, maximal=False))


def test_configurations_are_maximal_and_valid():
    confs = S.mig_configurations("H100-80GB")
    assert ("7g.80gb",) in confs and ("3g.40gb", "3g.40gb") in confs
    for c in confs:
        assert S.mig_fits("H100-80GB", list(c))


def test_unknown_names():
    with pytest.raises(KeyError, match="1g.10gb"):
        S.mig_layout("H100-80GB", ["1g.5gb"])
    with pytest.raises(KeyError, match="H100-80GB"):
        S.mig_gpu("H100-40GB")
    with pytest.raises(ValueError):
        S.mig_layout("H100-80GB", [])
    with pytest.raises(KeyError):
        S.isolation("SR-IOV")


# -- sharing models -----------------------------------------------------------------------------
def test_time_slicing_single_tenant_is_the_dedicated_queue():
    p = S.time_sliced_p99_ms([20.0], [10.0])
    assert p[0] == pytest.approx(inference.p99_latency_ms(20.0, 1, 10.0))


def test_noisy_neighbour_time_slicing_vs_mig():
    nq = np.array([0.0, 30.0, 60.0])
    ts = S.noisy_neighbour_p99_ms(nq, qps=10, service_ms=8, neighbour_service_ms=8)
    mig = S.noisy_neighbour_p99_ms(nq, qps=10, service_ms=8, neighbour_service_ms=8, mode="mig")
    assert np.all(np.diff(ts) > 0)          # co-tenant load raises the quiet tenant's P99
    assert np.ptp(mig) == 0.0               # MIG: independent of the neighbour
    with pytest.raises(ValueError, match="neighbour_qps"):
        S.noisy_neighbour_p99_ms(200.0, qps=10, service_ms=8, neighbour_service_ms=8)


def test_shared_service_time():
    assert S.shared_service_ms(10.0, 0.5, 0.25) == 10.0     # share covers what the request uses
    assert S.shared_service_ms(10.0, 0.125, 0.25) == pytest.approx(20.0)
    assert S.shared_service_ms(10.0, 1 / 7, 1.0) == pytest.approx(70.0)


def test_plan_example_numbers():
    plans = S.compare_sharing(14, 20.0, 8.0, 8.0, 100.0, gpu_fill=0.3)
    assert plans["dedicated"].gpus == 14
    assert plans["mig"].profile == "1g.10gb" and plans["mig"].gpus == 2
    for p in plans.values():
        assert p.p99_ms <= 100.0
    assert plans["time_slicing"].isolation["memory"] == "none"
    assert plans["mig"].isolation["faults"] == "hard"
    assert S.gpus_saved(14, 20.0, 8.0, 8.0, 100.0, "mig", gpu_fill=0.3) == 12


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 40), qps=st.floats(0.5, 300.0), s=st.floats(0.5, 40.0), mem=st.floats(0.5, 70.0),
       slack=st.floats(1.2, 20.0), fill=st.floats(0.05, 1.0), gpu=st.sampled_from(GPUS))
def test_sharing_never_needs_more_gpus_than_dedicating(n, qps, s, mem, slack, fill, gpu):
    p99 = s * slack
    plans = S.compare_sharing(n, qps, s, mem, p99, gpu=gpu, gpu_fill=fill)
    for m, p in plans.items():
        assert 1 <= p.gpus <= plans["dedicated"].gpus, m
        assert p.p99_ms <= p99 * (1 + 1e-9)


def test_pack_services_matches_identical_plan_and_slo():
    svs = [S.Service(f"t{i}", 20.0, 8.0, 8.0, 100.0, 0.3) for i in range(14)]
    for mode in S.MODES:
        pk = S.pack_services(svs, mode)
        assert pk.meets(svs)
        assert pk.gpus == S.plan_sharing(14, 20.0, 8.0, 8.0, 100.0, mode, gpu_fill=0.3).gpus, mode
    mig = S.pack_services(svs, "mig")
    for gpu_slots in mig.assignment:
        assert S.mig_fits("H100-80GB", [x.split(":")[1] for x in gpu_slots])


def test_bad_input():
    with pytest.raises(ValueError, match="n_tenants"):
        S.plan_sharing(0, 10, 5, 5, 50)
    with pytest.raises(ValueError, match="qps"):
        S.plan_sharing(3, -1, 5, 5, 50)
    with pytest.raises(ValueError, match="mode"):
        S.plan_sharing(3, 10, 5, 5, 50, "vgpu")
    with pytest.raises(ValueError, match="memory_gb"):
        S.plan_sharing(3, 10, 5, 90, 50)
    with pytest.raises(ValueError, match="p99_ms"):
        S.plan_sharing(3, 10, 60, 5, 50)          # an idle whole GPU already misses the target
    with pytest.raises(ValueError, match="gpu_fill"):
        S.plan_sharing(3, 10, 5, 5, 50, gpu_fill=float("nan"))
    with pytest.raises(ValueError, match="utilisation|load"):
        S.time_sliced_p99_ms([100.0, 100.0], [6.0, 6.0])
    with pytest.raises(ValueError):
        S.pack_services([("a", 1, 2, 3, 4)])


# -- isolation matrix ---------------------------------------------------------------------------
def test_isolation_matrix():
    rows = S.isolation_matrix()
    for r in rows:
        for a in S.ISOLATION_ASPECTS:
            assert r[a] in S.ISOLATION_LEVELS
        assert len(r["source"]) > 20
    assert S.not_isolated_by("K8s Namespace") == ["performance", "network"]
    assert S.isolation("MIG")["memory"] == "hard" and S.isolation("time-slicing")["faults"] == "none"


# -- parsers ------------------------------------------------------------------------------------
def test_parse_lgip_sample_matches_catalog():
    rows = S.parse_mig_lgip(S.SAMPLE_LGIP_H100)
    assert len(rows) == 7
    for r in rows:
        p = S.mig_profile("H100-80GB", r.name)
        assert (r.id, r.total, r.memory_gib, r.sm) == (p.id, p.max_instances, p.memory_gib, p.sm)
    assert rows[-1].ce == 8 and rows[-1].ofa == 1


def test_parse_lgip_without_continuation_lines():
    text = "\n".join(line for line in S.SAMPLE_LGIP_H100.splitlines() if "MIG" in line or "profiles" in line)
    rows = S.parse_mig_lgip(text)
    assert [r.id for r in rows] == [19, 20, 15, 14, 9, 5, 0] and rows[0].ce is None


@pytest.mark.parametrize("bad", ["", "garbage", b"\x00\xff", 42, "| GPU instance profiles: |\n| nothing |",
                                 S.SAMPLE_LGIP_H100.replace("7/7", "9/7")])
def test_parse_lgip_garbage(bad):
    with pytest.raises(ParseError):
        S.parse_mig_lgip(bad)


def test_parse_smi_list():
    devs = S.parse_nvidia_smi_list(S.SAMPLE_SMI_L)
    migs = [d for d in devs if d.mig_device is not None]
    assert [d.profile for d in migs] == ["3g.40gb", "3g.40gb"] and all(d.uuid.startswith("MIG-") for d in migs)
    assert [d.gpu for d in devs] == [0, 0, 0, 1]
    for bad in ["", "hello", "  MIG 3g.40gb Device 0: (UUID: MIG-abc)"]:
        with pytest.raises(ParseError):
            S.parse_nvidia_smi_list(bad)


# -- explorer and figures -----------------------------------------------------------------------
def test_explorer_updates_plans_and_figure_data():
    from labutil.explore import sharing as ES

    ex = ES.sharing_explorer()
    g_bars = ex.figure._sharing[0]
    assert [b.get_height() for b in g_bars] == [14, 3, 2, 2]
    ex.set(gpu_fill=1.0, n_tenants=30)           # requests fill the whole GPU: MIG loses its edge
    assert ex.error is None
    plans = ex.result["plans"]
    assert [b.get_height() for b in g_bars] == [plans[m].gpus for m in S.MODES]
    assert plans["mig"].gpus <= plans["dedicated"].gpus
    ex.set(memory_gb=40.0, mode="time_slicing")
    assert ex.result["selected"].mode == "time_slicing" and ex.result["selected"].tenants_per_gpu <= 2
    ex.set(p99_ms=20.0, service_ms=30.0)         # unreachable target: error shown, last result kept
    assert isinstance(ex.error, ValueError)
    for fig in (ES.mig_layouts_figure(), ES.mig_granularity_figure("A100-80GB"), ES.noisy_neighbour_figure()):
        assert fig.axes and fig.axes[0].has_data()


def test_sharing_explorer_summary_is_chinese():
    import re
    from labutil.explore import sharing as ESx
    ex = ESx.sharing_explorer()
    for mode in S.MODES:
        ex.set(mode=mode)
        text = ESx._summary(ex.result, {})
        words = re.findall(r"[A-Za-z]{4,}", re.sub(r"<[^>]+>|profile \S+", "", text))
        assert not words, (mode, words)               # only MIG / MPS / P99 / profile names stay in Latin letters
        assert "张卡" in text and "隔离" in text
