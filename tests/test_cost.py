"""Tests of labutil.cost: capex/opex/TCO arithmetic, break-even, downtime, budget comparison.

Prices are the documented defaults of labutil/data/prices.toml (list or illustrative); the tests
check the model's arithmetic and the direction of the seed claims, not the prices themselves.
"""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from labutil import cost as C, hardware, reliability as R


def test_every_price_entry_is_sourced_and_labelled():
    data = C.price_data()
    for section, entries in data.items():
        items = entries.items() if all(isinstance(v, dict) for v in entries.values()) else [(section, entries)]
        for name, e in items:
            assert e.get("source"), f"{section}.{name} has no source"
            assert e.get("kind") in ("list", "illustrative"), f"{section}.{name} kind"
            assert e.get("date"), f"{section}.{name} has no date"


def test_capex_arithmetic_for_1024_h100():
    c = C.capex(1024, server="DGX-H100", fabric="IB-NDR-400G", storage_tb_per_gpu=2.0, storage_usd_per_tb=400,
                facility_usd_per_kw=10_000, pue=1.5, server_price=350_000, network_per_gpu=8_000)
    assert c.servers == 128
    assert c.servers_usd == pytest.approx(128 * 350_000)
    assert c.network_usd == pytest.approx(1024 * 8_000)
    assert c.storage_usd == pytest.approx(1024 * 2 * 400)
    it_kw = 128 * hardware.server("DGX-H100").max_power_w / 1000  # 10.2 kW per DGX H100
    # build-out is quoted per kW of IT (critical) load: PUE does not enter the capex
    assert c.facility_usd == pytest.approx(it_kw * 10_000, rel=0.05)
    assert C.capex(1024, pue=1.2).facility_usd == pytest.approx(C.capex(1024, pue=1.8).facility_usd)
    assert c.total_usd == pytest.approx(c.hardware_usd + c.facility_usd)


def test_tco_items_rank_power_below_maintenance_and_facility():
    # ch05/ch10 (review 2026-12-03 F7): at 0.08 USD/kWh power is not "second only to depreciation"
    t = C.tco(1024, 4, 0.8)
    items = C.tco_items(t)
    assert list(items)[0] == "servers" and sum(items.values()) == pytest.approx(t.total_usd)
    assert items["power"] == pytest.approx(4 * t.opex.power_usd)
    assert C.tco_rank(t, "power") > C.tco_rank(t, "maintenance") and C.tco_rank(t, "power") > C.tco_rank(t, "facility build-out")
    # at a high tariff power climbs the ranking
    assert C.tco_rank(C.tco(1024, 4, 0.8, usd_per_kwh=0.30), "power") < C.tco_rank(t, "power")
    with pytest.raises(KeyError, match="power"):
        C.tco_rank(t, "powr")


def test_opex_power_is_kw_times_pue_times_hours_times_price():
    o = C.opex_per_year(1024, server="DGX-H100", pue=1.5, usd_per_kwh=0.08, load_factor=1.0,
                        staff_usd_per_fte_year=200_000, servers_per_fte=100, maintenance_fraction=0.05,
                        hardware_usd=10e6)
    assert o.power_usd == pytest.approx(o.facility_kw * 8760 * 0.08)
    assert o.facility_kw == pytest.approx(o.it_kw * 1.5, rel=0.05)
    assert o.staff_usd == pytest.approx(2 * 200_000)   # ceil(128 / 100) FTE
    assert o.maintenance_usd == pytest.approx(0.05 * 10e6)


def test_tco_cost_per_gpu_hour_definition():
    t = C.tco(1024, years=4, utilisation=0.8)
    assert t.total_usd == pytest.approx(t.capex.total_usd + 4 * t.opex.total_usd)
    assert t.usd_per_gpu_hour == pytest.approx(t.total_usd / (1024 * 8760 * 4 * 0.8))
    assert t.usd_per_cluster_hour == pytest.approx(t.total_usd / (8760 * 4))


@given(u1=st.floats(0.05, 1.0), u2=st.floats(0.05, 1.0))
def test_higher_utilisation_never_raises_cost_per_gpu_hour(u1, u2):
    lo, hi = sorted((u1, u2))
    assert C.tco(512, 4, hi).usd_per_gpu_hour <= C.tco(512, 4, lo).usd_per_gpu_hour + 1e-9


@given(p1=st.floats(0.0, 0.5), p2=st.floats(0.0, 0.5))
def test_higher_power_price_never_lowers_tco(p1, p2):
    lo, hi = sorted((p1, p2))
    assert C.tco(256, 3, 0.7, usd_per_kwh=hi).total_usd >= C.tco(256, 3, 0.7, usd_per_kwh=lo).total_usd - 1e-6


def test_breakeven_utilisation_and_months_are_consistent():
    t = C.tco(1024, years=4, utilisation=0.8)
    price = C.cloud_usd_per_gpu_hour("H100-SXM")
    u_star = C.breakeven_utilisation(t, price)
    own, cloud = C.cumulative_costs(C.tco(1024, 4, u_star), price, np.array([48.0]))
    assert own[0] == pytest.approx(cloud[0], rel=1e-9)  # at u*, both cost the same over 4 years
    m = C.breakeven_months(t, price)
    assert m is not None and 0 < m
    own, cloud = C.cumulative_costs(t, price, np.array([m]))
    assert own[0] == pytest.approx(cloud[0], rel=1e-9)
    # below the opex rate the cloud is always cheaper: no break-even
    assert C.breakeven_months(C.tco(1024, 4, 0.05), price) is None


def test_downtime_cost_seed004_myth3():
    # A failure idles the whole job for R and loses interval/2 of work: 1,024 GPUs, 6 h manual
    # recovery, hourly checkpoints -> 6.5 h x 1,024 GPU-hours per failure.
    d = C.downtime_cost(1024, 0.5, 6 * 3600, 3600, 2.0)
    assert d.hours_lost_per_failure == pytest.approx(6.5)
    assert d.usd_per_failure == pytest.approx(1024 * 6.5 * 2.0)
    assert d.usd_per_year == pytest.approx(d.usd_per_failure * 0.5 * 365)
    auto = C.downtime_cost(1024, 0.5, 10 * 60, 3600, 2.0)
    assert auto.usd_per_year < d.usd_per_year / 5


def test_balanced_beats_top_gpu_on_slow_network_seed004_myth1():
    opts = {o.label: o for o in C.budget_comparison(50e6)}
    top_slow = opts["top GPU + 25GbE"]
    balanced = opts["mid GPU + 200G IB (balanced)"]
    assert top_slow.peak_pflops > 0.8 * balanced.peak_pflops          # the H100 option buys more peak...
    assert balanced.delivered_pflops > 1.2 * top_slow.delivered_pflops  # ...but delivers less
    assert top_slow.scaling_efficiency < 0.35                          # seed 003: < 30-ish % on 25 GbE
    for o in opts.values():
        assert o.n_gpus * o.usd_per_gpu <= 50e6
        assert 0 < o.scaling_efficiency <= 1


def test_scaling_efficiency_grows_with_bandwidth():
    e = [C.dp_scaling_efficiency(1024, 7e9, 16384, 989.4, 0.45, bw) for bw in (50, 400, 3200)]
    assert e[0] < e[1] < e[2] <= 1


@pytest.mark.parametrize("call, err, name", [
    (lambda: C.capex(0), ValueError, "n_gpus"),
    (lambda: C.capex(8, server="DGX-H9000"), KeyError, "DGX-H9000"),
    (lambda: C.capex(8, fabric="token-ring"), KeyError, "token-ring"),
    (lambda: C.tco(8, years=0), ValueError, "years"),
    (lambda: C.tco(8, utilisation=1.5), ValueError, "utilisation"),
    (lambda: C.tco(8, pue=0.8), ValueError, "pue"),
    (lambda: C.opex_per_year(8, usd_per_kwh=-0.1), ValueError, "usd_per_kwh"),
    (lambda: C.downtime_cost(8, 1, 60, 0, 2.0), ValueError, "interval_s"),
    (lambda: C.budget_comparison(1000.0), ValueError, "budget_usd"),
    (lambda: C.cloud_usd_per_gpu_hour("L4"), KeyError, "L4"),
])
def test_bad_input_raises_naming_the_parameter(call, err, name):
    with pytest.raises(err, match=name):
        call()


def test_vectorised_capex_over_cluster_size():
    n = np.array([64, 512, 4096])
    c = C.capex(n)
    assert np.all(np.diff(c.total_usd) > 0)
    assert np.allclose(c.servers, n / 8)


def test_failure_cost_uses_reliability_rates():
    f = R.llama3_failures_per_day(1024)
    t = C.tco(1024, 4, 0.9)
    d = C.downtime_cost(1024, f, 600, 1800, t.usd_per_cluster_hour / 1024)
    assert d.failures_per_year == pytest.approx(f * 365)
    assert d.gpu_hours_lost_per_year == pytest.approx(1024 * (600 + 900) / 3600 * f * 365)


def test_capital_recovery_factor_is_the_annuity_formula():
    # r (1+r)^Y / ((1+r)^Y - 1); 8 % over 4 years = 0.3019 (any engineering-economics annuity table)
    assert C.capital_recovery_factor(0.08, 4) == pytest.approx(0.08 * 1.08 ** 4 / (1.08 ** 4 - 1))
    assert C.capital_recovery_factor(0.08, 4) == pytest.approx(0.3019, abs=1e-4)
    assert C.capital_recovery_factor(0.0, 4) == pytest.approx(0.25)
    assert np.allclose(C.capital_recovery_factor(np.array([0.0, 0.05]), 5), [0.2, 0.05 * 1.05 ** 5 / (1.05 ** 5 - 1)])
    with pytest.raises(ValueError, match="rate"):
        C.capital_recovery_factor(-0.01, 4)


def test_facility_years_and_interest_are_off_by_default_and_add_up():
    base = C.tco(1024, 4, 0.8)
    assert base.facility_charged_usd == base.capex.facility_usd and base.financing_usd == 0
    assert base.upfront_usd == pytest.approx(base.capex.total_usd) and base.yearly_usd == pytest.approx(base.opex.total_usd)
    # the facility outlives the cluster: a 4-year horizon carries 4/20 of a 20-year build-out
    fy = C.tco(1024, 4, 0.8, facility_years=20)
    assert fy.facility_charged_usd == pytest.approx(base.capex.facility_usd * 4 / 20)
    assert fy.total_usd == pytest.approx(base.total_usd - 0.8 * base.capex.facility_usd)
    assert C.tco(1024, 30, 0.8, facility_years=20).facility_charged_usd == pytest.approx(base.capex.facility_usd)
    # the cost of money: the up-front spend repaid as an annuity
    it = C.tco(1024, 4, 0.8, interest_rate=0.08)
    assert it.financing_usd == pytest.approx(base.capex.total_usd * (4 * C.capital_recovery_factor(0.08, 4) - 1))
    assert it.usd_per_gpu_hour > base.usd_per_gpu_hour
    for t in (base, fy, it, C.tco(1024, 4, 0.8, facility_years=20, interest_rate=0.08)):
        assert sum(C.tco_parts(t).values()) == pytest.approx(t.total_usd)
        assert sum(C.tco_items(t).values()) == pytest.approx(t.total_usd)
        # the cash curve reaches the TCO at the end of the horizon, so break-even month and utilisation agree
        assert float(C.cumulative_costs(t, 4.916, 12 * t.years)[0]) == pytest.approx(t.total_usd)
        u = C.breakeven_utilisation(t, 4.916)
        at = C.tco(1024, 4, u, facility_years=t.facility_years, interest_rate=t.interest_rate)
        assert C.breakeven_months(at, 4.916) == pytest.approx(48.0, rel=1e-6)
    assert "financing" in C.tco_items(it) and "financing" not in C.tco_items(base)
    with pytest.raises(ValueError, match="facility_years"):
        C.tco(1024, 4, 0.8, facility_years=0)
    with pytest.raises(ValueError, match="interest_rate"):
        C.tco(1024, 4, 0.8, interest_rate=-0.1)
