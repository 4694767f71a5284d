"""dcgm-exporter counter lists: what the upstream lists enable, and the course's list (ch26).

Upstream state recorded here (NVIDIA/dcgm-exporter at commit d5e5f510a1b6, 2026-05-12; the files are
vendored verbatim under labutil/data/dcgm_exporter/upstream/, their git blob ids checked below):
- ``DCGM_FI_PROF_SM_ACTIVE`` and ``SM_OCCUPANCY`` are commented out in BOTH ``default-counters.csv``
  (dcgm-exporter's ``-f`` default) and ``dcp-metrics-included.csv`` (the GPU Operator's default);
  a maintainer: "disabled by default mainly because they may confuse users" (dcgm-exporter issue #400).
- ``DCGM_FI_DEV_ECC_DBE_VOL_TOTAL``, the metric of the course's ``GpuUncorrectableEcc`` rule, is
  commented out in both, so on a default install that rule has no series and can never fire.
- ``PIPE_TENSOR_ACTIVE``, ``DRAM_ACTIVE``, ``GR_ENGINE_ACTIVE``, ``GPU_TEMP``, ``XID_ERRORS`` are on in both.
"""

import re
import subprocess

import pytest

from conftest import ROOT
from labutil import monitoring as M

DATA = ROOT / "labutil" / "data" / "dcgm_exporter"
UPSTREAM_BLOBS = {"default-counters.csv": "2eed7a651db300797554cb91591908f410902f21",
                  "dcp-metrics-included.csv": "d8e53f848adc1c88fdd7d0bd238f07085dd54e9d"}
OFF_IN_BOTH = {"DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_SM_OCCUPANCY", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
               "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
               "DCGM_FI_DEV_THERMAL_VIOLATION", "DCGM_FI_DEV_POWER_VIOLATION",
               "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL"}
ON_IN_BOTH = {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE", "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
              "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_POWER_USAGE",
              "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_ROW_REMAP_FAILURE",
              "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_FB_USED"}
# what the course's list turns on beyond dcp-metrics-included.csv (its header says why)
COURSE_ADDS = {"DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_SM_OCCUPANCY", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
               "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "DCGM_FI_DEV_THERMAL_VIOLATION",
               "DCGM_FI_DEV_POWER_VIOLATION", "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
               "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
               "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"}


def test_vendored_upstream_lists_are_verbatim():
    for name, blob in UPSTREAM_BLOBS.items():
        r = subprocess.run(["git", "hash-object", str(DATA / "upstream" / name)], capture_output=True, text=True,
                           check=False)
        if r.returncode != 0:
            pytest.skip(f"git hash-object unavailable: {r.stderr.strip()}")
        assert r.stdout.strip() == blob, f"{name} differs from NVIDIA/dcgm-exporter d5e5f510a1b6:etc/{name}"


@pytest.mark.parametrize("name", ["default-counters", "dcp-metrics-included"])
def test_what_the_upstream_lists_enable(name):
    enabled = M.enabled_metrics(name)
    commented = {c.field for c in M.dcgm_counter_list(name) if not c.enabled}
    assert OFF_IN_BOTH <= commented and not OFF_IN_BOTH & enabled
    assert ON_IN_BOTH <= enabled
    assert len(enabled) == 25


def test_a_default_install_cannot_fire_the_ecc_rule_and_the_course_list_can():
    cov = {r["alert"]: r for r in M.rule_metric_coverage()}
    assert cov["GpuUncorrectableEcc"]["default-counters"] is False
    assert cov["GpuUncorrectableEcc"]["dcp-metrics-included"] is False
    assert all(r["course"] for r in cov.values())
    assert {a for a, r in cov.items() if r["default-counters"] and r["dcp-metrics-included"]} == {
        "GpuTemperatureHigh", "GpuFellOffBus", "TrainingTensorIdle"}


def test_every_metric_of_every_alert_rule_is_enabled_in_the_course_list():
    course = M.enabled_metrics("course")
    for rule in M.default_rules():
        if rule.metric.startswith("DCGM_"):
            assert rule.metric in course, f"{rule.name}: {rule.metric} is not enabled in course-counters.csv"
        else:
            assert rule.metric == "up"      # written by Prometheus for every scrape, not by dcgm-exporter


def test_every_dcgm_field_the_course_names_is_enabled_in_the_course_list():
    """Chapters, exercises, explorers and the sample: any DCGM_FI_* they name is exported by the course list."""
    names = set()
    for path in [*(ROOT / "chapters").glob("*.py"), *(ROOT / "labutil").rglob("*.py")]:
        names |= set(re.findall(r"DCGM_FI_[A-Z0-9_]+", path.read_text(encoding="utf-8")))
    names = {n for n in names if not n.endswith("_")}          # 'DCGM_FI_PROF_*' in prose is a family, not a field
    course = {c.field for c in M.dcgm_counter_list("course") if c.enabled}
    assert "DCGM_FI_PROF_SM_ACTIVE" in names and "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL" in names
    assert names <= course, sorted(names - course)
    assert set(M.parse_prometheus_text(M.DCGM_EXPORTER_SAMPLE).names()) <= M.enabled_metrics("course")


def test_course_list_is_dcp_metrics_included_plus_the_documented_fields():
    up = {c.field: c for c in M.dcgm_counter_list("dcp-metrics-included")}
    course = {c.field: c for c in M.dcgm_counter_list("course")}
    assert set(course) == set(up)
    for f, c in course.items():
        assert (c.prom_type, c.help) == (up[f].prom_type, up[f].help), f    # upstream type and HELP text
    added = {f for f, c in course.items() if c.enabled and not up[f].enabled}
    assert added == COURSE_ADDS
    assert not {f for f, c in up.items() if c.enabled and not course[f].enabled}
    header = M.dcgm_counter_path("course").read_text(encoding="utf-8")
    for f in ("DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "issue #400", "d5e5f510a1b6"):
        assert f in header


def test_sample_help_and_types_are_upstream_text():
    up = {c.field: c for c in M.dcgm_counter_list("dcp-metrics-included")}
    for f, (typ, help_) in M.DCGM_FIELDS.items():
        assert (typ, help_) == (up[f].prom_type, up[f].help)


@pytest.mark.parametrize("bad", [
    "", "   ", "# only comments\n", "DCGM_FI_DEV_GPU_TEMP, gauge\n", "DCGM_FI_DEV_GPU_TEMP, meter, x\n",
    "GPU_TEMP, gauge, x\n", "DCGM_FI_DEV_GPU_TEMP, gauge, temperature, in C\n",
    'DCGM_FI_DEV_GPU_TEMP, gauge, "a quote after a space is a bare quote to Go\'s csv, in C"\n', "DCGM_FI_DEV_GPU_TEMP, gauge, x\nDCGM_FI_DEV_GPU_TEMP, gauge, y\n", None, 42,
])
def test_parser_refuses_what_dcgm_exporter_refuses(bad):
    with pytest.raises(M.DcgmCsvError):
        M.parse_dcgm_counters_csv(bad)


def test_parser_reads_commented_fields_spaces_and_help_with_commas():
    rows = M.parse_dcgm_counters_csv("# Format\n# DCGM FIELD, type, help\n"
                                     "DCGM_FI_DEV_DEC_UTIL ,     gauge, Decoder utilization (in %).\n"
                                     "# DCGM_FI_PROF_SM_ACTIVE, gauge, The ratio, with a comma.\n"
                                     "DCGM_FI_DRIVER_VERSION, label, Driver Version\n"
                                     'DCGM_FI_DEV_GPU_TEMP,gauge,"GPU temperature, in C."\n')
    assert [(r.field, r.prom_type, r.enabled) for r in rows] == [
        ("DCGM_FI_DEV_DEC_UTIL", "gauge", True), ("DCGM_FI_PROF_SM_ACTIVE", "gauge", False),
        ("DCGM_FI_DRIVER_VERSION", "label", True), ("DCGM_FI_DEV_GPU_TEMP", "gauge", True)]
    assert rows[3].help == "GPU temperature, in C."
    assert rows[1].help == "The ratio, with a comma."
